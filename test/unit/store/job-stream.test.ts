/**
 * The job stream's table on both backends: a key is numbered once, in the order appended, however
 * many writers append at once (two servers and a worker on one store); reading goes by seq and
 * leaves out expired live entries; pruning removes expired ones but never a job's newest, so a
 * seq is never handed out twice.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Store } from '../../../src/worker/store';
import { openFresh, storeBackends } from '../../helpers/store-backends';

for (const backend of storeBackends()) {
  describe.skipIf(backend.skip !== null)(`job stream on ${backend.name}`, () => {
    let store: Store;
    beforeEach(async () => {
      store = await openFresh(backend);
    });
    afterEach(async () => {
      await store.close();
    });

    it('numbers each key once, in order, per job; a key appended again keeps its first number and body', async () => {
      const first = await store.appendStreamEntries('j1', [
        { key: 'job', body: 'a' },
        { key: 'hop:0:intake', body: 'b' },
      ]);
      expect([...first]).toEqual([
        ['job', 1],
        ['hop:0:intake', 2],
      ]);
      const again = await store.appendStreamEntries('j1', [
        { key: 'hop:0:intake', body: 'changed' },
        { key: 'end', body: 'c' },
      ]);
      expect([...again]).toEqual([
        ['hop:0:intake', 2],
        ['end', 3],
      ]);
      expect(await store.appendStreamEntries('j2', [{ key: 'job', body: 'x' }])).toEqual(new Map([['job', 1]]));
      expect(await store.readStreamEntries('j1', 0, 10)).toEqual([
        { seq: 1, key: 'job', body: 'a' },
        { seq: 2, key: 'hop:0:intake', body: 'b' },
        { seq: 3, key: 'end', body: 'c' },
      ]);
      expect(await store.readStreamEntries('j1', 1, 1)).toEqual([{ seq: 2, key: 'hop:0:intake', body: 'b' }]);
    });

    it('writers appending at once: every key numbered exactly once, the numbers 1..n with no gap', async () => {
      const writers = Array.from({ length: 6 }, (_, w) =>
        store.appendStreamEntries(
          'busy',
          Array.from({ length: 10 }, (_, i) => ({ key: `k${(w * 7 + i) % 25}`, body: String(w) })),
        ),
      );
      const answers = await Promise.all(writers);
      const rows = await store.readStreamEntries('busy', 0, 100);
      expect(rows.map((r) => r.seq)).toEqual(rows.map((_, i) => i + 1));
      expect(new Set(rows.map((r) => r.key)).size).toBe(rows.length);
      // Each writer was told the number the key has.
      const byKey = new Map(rows.map((r) => [r.key, r.seq]));
      for (const answer of answers) for (const [key, seq] of answer) expect(byKey.get(key)).toBe(seq);
    });

    it('expired live entries are not read and are pruned, except the newest of a job, so no seq is given twice', async () => {
      const past = new Date(Date.now() - 1_000);
      await store.appendStreamEntries('j3', [
        { key: 'job', body: 'durable' },
        { key: 'text:1', body: 'old', expiresAt: past },
        { key: 'text:2', body: 'newest', expiresAt: past },
      ]);
      expect((await store.readStreamEntries('j3', 0, 10)).map((r) => r.key)).toEqual(['job']);
      expect(await store.pruneStreamEntries(new Date())).toBe(1);
      const next = await store.appendStreamEntries('j3', [{ key: 'text:3', body: 'next' }]);
      expect(next.get('text:3')).toBe(4);
    });
  });
}
