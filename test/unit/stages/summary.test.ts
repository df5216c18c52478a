/** The accumulated summary: one segment per stage, joined, never re-summarised, the oldest
 * moved to the store behind chained references once over the cap — nothing lost. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LIMITS, SUMMARY_SEPARATOR, hopSegment, parseReference, splitSummary } from '../../../contracts';
import { createActivities } from '../../../activities/built-in';
import { SummaryUnreadableError, appendSegments, readSummarySegments } from '../../../activities/summary';
import { summaryNotAppended } from '../../../workflows/rail/invariants';
import { openStore, type Store } from '../../../src/worker/store';
import { Relay, corpusStore, firstPackage, refundTicket, ticketRef } from './helpers';

let store: Store;
beforeEach(async () => {
  store = await openStore({ sqlitePath: ':memory:' });
});
afterEach(async () => {
  await store.close();
});

/** A stage's segment of about `chars` characters of text, numbered so order is visible (ten
 * short ones fit the kept summary; twenty-five do not). */
const segment = (n: number, chars = Math.floor(LIMITS.summaryKept / 50)) =>
  hopSegment(n, `stage-${n}`, 'note.v1', `${n} `.padEnd(chars, 'x'));

/** Appends `count` segments one hop at a time, as the stages would; every step is checked. */
async function relay(count: number, chars?: number): Promise<{ summary: string | undefined; all: string[] }> {
  let summary: string | undefined;
  const all: string[] = [];
  for (let n = 0; n < count; n++) {
    const next = await appendSegments(store, summary, [segment(n, chars)]);
    all.push(segment(n, chars));
    expect(next!.length).toBeLessThanOrEqual(LIMITS.summaryKept);
    expect(summaryNotAppended(summary, next), `hop ${n}`).toBeUndefined();
    expect(splitSummary(next).at(-1)).toBe(segment(n, chars));
    summary = next;
  }
  return { summary, all };
}

/** How many references lead back from `summary` to the first segment. */
async function referencesDeep(summary: string | undefined): Promise<number> {
  let depth = 0;
  for (let ref = parseReference(splitSummary(summary)[0] ?? ''); ref; depth++)
    ref = parseReference(splitSummary((await store.getContent(ref.sha))!)[0] ?? '');
  return depth;
}

describe('hopSegment', () => {
  it("says hop, stage and artifact type, then the stage's words on one line", () => {
    expect(hopSegment(2, 'draft', 'summary_md', 'draft revision 0\n citing  refund-policy.2')).toBe(
      'hop 2 draft → summary_md: draft revision 0 citing refund-policy.2',
    );
  });

  it('says so when the stage said nothing, and bounds what it said', () => {
    expect(hopSegment(0, 'intake', 'intake.v1', undefined)).toBe('hop 0 intake → intake.v1: no summary given');
    expect(hopSegment(0, 'intake', 'intake.v1', '   ')).toBe('hop 0 intake → intake.v1: no summary given');
    const long = hopSegment(0, 'intake', 'intake.v1', 'y'.repeat(2_000));
    expect(long.length).toBe('hop 0 intake → intake.v1: '.length + LIMITS.shortText);
    expect(long.endsWith('…')).toBe(true);
  });

  it('never holds the separator, so a summary splits back into its segments', () => {
    expect(hopSegment(1, 'judge', 'verdict.v1', `a${SUMMARY_SEPARATOR}b`)).not.toContain(SUMMARY_SEPARATOR);
  });
});

describe('appendSegments', () => {
  it('the first segment stands alone; the next are joined with ---hop--- in order', async () => {
    const one = await appendSegments(store, undefined, ['hop 0 intake → intake.v1: a']);
    expect(one).toBe('hop 0 intake → intake.v1: a');
    const two = await appendSegments(store, one, ['hop 1 retrieve → chunks.v1: b']);
    expect(two).toBe('hop 0 intake → intake.v1: a\n---hop---\nhop 1 retrieve → chunks.v1: b');
    expect(await appendSegments(store, two, ['c', 'd'])).toBe(`${two}\n---hop---\nc\n---hop---\nd`);
  });

  it('keeps a summary from before segments as it was, as one segment', async () => {
    const old = '0. intake: accepted → intake.v1\n1. retrieve: accepted → chunks.v1';
    const next = await appendSegments(store, old, ['hop 2 draft → summary_md: x']);
    expect(next).toBe(`${old}${SUMMARY_SEPARATOR}hop 2 draft → summary_md: x`);
    expect(summaryNotAppended(old, next)).toBeUndefined();
  });

  it('under the cap nothing goes to the store', async () => {
    const { summary } = await relay(10);
    expect(splitSummary(summary)).toHaveLength(10);
    expect(parseReference(splitSummary(summary)[0]!)).toBeUndefined();
  });

  it('at the cap the oldest segments move to the store behind one reference, and the reader returns every segment', async () => {
    const { summary, all } = await relay(25);
    const [first, ...rest] = splitSummary(summary);
    const ref = parseReference(first!);
    expect(ref).toMatchObject({ uri: expect.stringMatching(/^handrail:\/\/summaries\/[0-9a-f]{64}$/) });
    expect(first).toBe(`[earlier hops: ${ref!.uri} (${ref!.segments} segments)]`);
    // The newest segments stay on the package, untouched; the reference counts the rest.
    expect(rest).toEqual(all.slice(all.length - rest.length));
    expect(ref!.segments + rest.length).toBe(25);
    expect(await readSummarySegments(store, summary)).toEqual(all);
  });

  it('a second offload stores the first reference first: the chain leads back to hop 0', async () => {
    const { summary, all } = await relay(60);
    const ref = parseReference(splitSummary(summary)[0]!)!;
    const stored = (await store.getContent(ref.sha))!;
    const previous = parseReference(splitSummary(stored)[0]!);
    expect(previous, 'the stored text starts with the previous reference').toBeDefined();
    expect(stored.startsWith(`[earlier hops: ${previous!.uri} (`)).toBe(true);
    // Every one of the 60 segments comes back, in order, through the whole chain.
    expect(await referencesDeep(summary)).toBeGreaterThanOrEqual(2);
    expect(await readSummarySegments(store, summary)).toEqual(all);
  });

  it('the newest segment stays on the package beside the reference, even when the two pass the kept length', async () => {
    const long = hopSegment(9, 'writer', 'note.v1', 'w'.repeat(LIMITS.shortText));
    expect(long.length).toBeGreaterThan(LIMITS.summaryKept);
    // The first segment alone stays whole; with one before it, the older one moves.
    expect(await appendSegments(store, undefined, [long])).toBe(long);
    const { summary, all } = await relay(3);
    const next = await appendSegments(store, summary, [long]);
    const [reference, ...inline] = splitSummary(next);
    expect(parseReference(reference!)?.segments).toBe(3);
    expect(inline).toEqual([long]);
    expect(summaryNotAppended(summary, next)).toBeUndefined();
    expect(await readSummarySegments(store, next)).toEqual([...all, long]);
  });

  it('a chain longer than the hop chain is read back whole (one reference at almost every hop)', async () => {
    const { summary, all } = await relay(LIMITS.chain * 4 + 50);
    expect(await referencesDeep(summary)).toBeGreaterThan(LIMITS.chain * 4);
    expect(await readSummarySegments(store, summary)).toEqual(all);
  });

  it('a segment too long to keep beside a reference goes to the store too (nothing is cut)', async () => {
    const huge = 'z'.repeat(LIMITS.summaryKept - 10);
    const next = await appendSegments(store, huge, ['hop 9 last → note.v1: y'.padEnd(200, 'y')]);
    expect(next!.length).toBeLessThanOrEqual(LIMITS.summaryKept);
    expect(await readSummarySegments(store, next)).toEqual([huge, 'hop 9 last → note.v1: y'.padEnd(200, 'y')]);
  });
});

describe('readSummarySegments', () => {
  it('a summary without references is its own segments', async () => {
    expect(await readSummarySegments(store, 'a\n---hop---\nb')).toEqual(['a', 'b']);
    expect(await readSummarySegments(store, undefined)).toEqual([]);
  });

  it('refuses a reference the store does not hold, or one whose count the store does not match', async () => {
    const missing = `[earlier hops: handrail://summaries/${'a'.repeat(64)} (3 segments)]\n---hop---\nx`;
    await expect(readSummarySegments(store, missing)).rejects.toThrow(SummaryUnreadableError);
    const sha = await store.putContent('one\n---hop---\ntwo');
    await expect(
      readSummarySegments(store, `[earlier hops: handrail://summaries/${sha} (3 segments)]`),
    ).rejects.toThrow(/stands for 3 segments; the store holds 2/);
    expect(
      await readSummarySegments(store, `[earlier hops: handrail://summaries/${sha} (2 segments)]\n---hop---\nthree`),
    ).toEqual(['one', 'two', 'three']);
  });
});

describe('each stage contributes its own segment', () => {
  it('a ticket-triage relay: one segment per stage, in its words, joined with ---hop---', async () => {
    const corpus = await corpusStore();
    try {
      const relay = new Relay(createActivities({ store: corpus }));
      const intake = await relay.run('intake', firstPackage(ticketRef(refundTicket)));
      const retrieve = await relay.run('retrieve', intake.package);
      const draft = await relay.run('draft', retrieve.package);
      const judge = await relay.run('judge', draft.package);
      const writeback = await relay.run('writeback', judge.package);
      const segments = splitSummary(writeback.package.summary);
      expect(segments).toHaveLength(5);
      expect(segments[0]).toBe('hop 1 intake → intake.v1: intent refund, risk low, language en');
      expect(segments[1]).toMatch(/^hop 1 retrieve → chunks\.v1: \d chunks?: refund-policy\.\d/);
      expect(segments[2]).toMatch(
        /^hop 1 draft → summary_md: draft revision 0 \(offline, \d+ characters\) citing refund-policy\.\d/,
      );
      expect(segments[3]).toBe('hop 1 judge → verdict.v1: verdict pass');
      expect(segments[4]).toBe(
        'hop 1 writeback → receipt.v1: CRM note written to record crm_tickets/tkt_18422 (created; ticket tkt_18422 triaged)',
      );
      // Each stage's package is the one before plus its segment.
      expect(writeback.package.summary).toBe(`${judge.package.summary}${SUMMARY_SEPARATOR}${segments[4]}`);
    } finally {
      await corpus.close();
    }
  });
});
