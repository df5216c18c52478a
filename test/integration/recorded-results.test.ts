/**
 * Replay compares commands, not results: this runs every recorded scenario again on the suite's
 * dev server and compares its normalized result with the one `npm run record-histories` stored.
 */
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCENARIOS, normalizeResult } from '../scenarios';
import { openStore } from '../../src/worker/store';
import { resultFile } from '../../scripts/replay/histories';
import { startRail, uniqueId, type Rail } from '../helpers/rail';

let rail: Rail;
beforeAll(async () => {
  // SQLite like the recorder, even when DATABASE_URL is set: chunks.v1 names its backend, so
  // the artifact hashes in the recorded results are the SQLite store's.
  rail = await startRail({ store: await openStore({ sqlitePath: ':memory:' }) });
});
afterAll(async () => {
  await rail?.stop();
  await rail?.store.close();
});

describe('recorded scenarios give the recorded results', () => {
  it.each(SCENARIOS.map((s) => [s.name, s] as const))(
    '%s: a fresh run matches test/histories/results',
    async (_name, scenario) => {
      const jobId = uniqueId(scenario.name);
      // A scenario that holds a stage runs on a worker of its own, as the recorder runs it.
      const own = scenario.activities
        ? await startRail({ store: rail.store, activities: scenario.activities })
        : undefined;
      try {
        const { result } = await scenario.run(own ?? rail, jobId);
        const recorded: unknown = JSON.parse(fs.readFileSync(resultFile(scenario.name), 'utf8'));
        expect(normalizeResult(result, jobId)).toEqual(recorded);
      } finally {
        await own?.stop();
      }
    },
  );
});
