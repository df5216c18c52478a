/** `handrail show`'s summary: every segment, read back through the store's references. */
import { describe, expect, it } from 'vitest';
import { joinSummary } from '../../../contracts';
import { appendSegments } from '../../../activities/summary';
import { summaryText } from '../../../src/operator/cli/format';
import { jobSummary } from '../../../src/operator/summary';
import { openStore, type Store } from '../../../src/worker/store';

const segments = Array.from({ length: 24 }, (_, n) => `hop ${n} stage-${n} → note.v1: ${'x'.repeat(400)}`);

async function offloaded(store: Store): Promise<string> {
  let summary: string | undefined;
  for (const s of segments) summary = await appendSegments(store, summary, [s]);
  return summary!;
}

describe('handrail show: the summary', () => {
  it('numbers the segments oldest first', () => {
    expect(summaryText({ segments: ['hop 0 intake → intake.v1: a', 'hop 1 retrieve → chunks.v1: b'] })).toBe(
      'Summary (2 segments)\n1. hop 0 intake → intake.v1: a\n2. hop 1 retrieve → chunks.v1: b',
    );
    expect(summaryText({ segments: [] })).toBe('Summary: none yet');
  });

  it('without references the store is not opened', async () => {
    const summary = joinSummary(['a', 'b']);
    expect(await jobSummary(summary, () => Promise.reject(new Error('no store here')))).toEqual({
      segments: ['a', 'b'],
    });
  });

  it('follows the references through the store, and closes it', async () => {
    const store = await openStore({ sqlitePath: ':memory:' });
    const summary = await offloaded(store);
    let closed = false;
    // The store as the CLI opens it, with its close recorded (and left to the test).
    const opened = Object.assign(Object.create(store) as Store, { close: () => Promise.resolve(void (closed = true)) });
    const shown = await jobSummary(summary, () => Promise.resolve(opened));
    expect(shown).toEqual({ segments });
    expect(closed).toBe(true);
    expect(summaryText(shown).split('\n')).toHaveLength(25);
    await store.close();
  });

  it('a store it cannot read leaves the package segments and says why', async () => {
    const store = await openStore({ sqlitePath: ':memory:' });
    const summary = await offloaded(store);
    await store.close();
    const other = await openStore({ sqlitePath: ':memory:' });
    const shown = await jobSummary(summary, () => Promise.resolve(other));
    expect(shown.segments[0]).toMatch(/^\[earlier hops: handrail:\/\/summaries\/[0-9a-f]{64} \(\d+ segments\)\]$/);
    expect(shown.unreadable).toMatch(/is not in the sqlite store .*HANDRAIL_DATA_DIR or DATABASE_URL/);
    expect(summaryText(shown)).toMatch(/^Summary \(the package's \d+ segments; earlier ones unreadable: /);
    expect(await jobSummary(summary, () => Promise.reject(new Error('SQLITE_CANTOPEN')))).toMatchObject({
      unreadable: expect.stringMatching(/^SQLITE_CANTOPEN/),
    });
  });
});
