/**
 * A hop's live text goes after the keys it must follow even when the hop's first write failed
 * (a store busy under load): the next write carries them, so a job read afterwards still shows
 * its text inside its hop. The text of the failed write is lost (live text is a view).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { hopText, withHopText } from '../../../src/stream/hop-text';
import { openStore, type Store } from '../../../src/worker/store';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'handrail-hop-text-'));
let store: Store;
beforeAll(async () => {
  store = await openStore({ sqlitePath: path.join(dir, 'store.sqlite') });
});
afterAll(async () => {
  await store?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** The store, with its first stream write refused. */
function failingOnce(inner: Store): Store {
  let failed = false;
  return new Proxy(inner, {
    get(target, prop, receiver) {
      if (prop === 'appendStreamEntries')
        return (...args: Parameters<Store['appendStreamEntries']>) => {
          if (!failed) {
            failed = true;
            return Promise.reject(new Error('database is locked'));
          }
          return target.appendStreamEntries(...args);
        };
      const value: unknown = Reflect.get(target, prop, receiver);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

it("a hop's first text write refused: the next one carries the hop's start key before its text", async () => {
  const jobId = 'job-hop-text-1';
  await withHopText(
    { store: failingOnce(store), jobId, hop: 2, stage: 'writer', chain: ['client', 'planner', 'researcher', 'writer'] },
    async () => {
      hopText()!.write('lost with the refused write ');
      await pause(30);
      hopText()!.write('kept');
    },
  );
  const keys = (await store.readStreamEntries(jobId, 0, 100)).map((e) => e.key);
  const text = keys.filter((k) => k.startsWith('text:'));
  expect(text).toEqual(['text:2:writer:1:1']);
  expect(keys.indexOf('hop:2:writer')).toBeGreaterThanOrEqual(0);
  expect(keys.indexOf('hop:2:writer')).toBeLessThan(keys.indexOf(text[0]!));
  // The hops before it go before it too (from the package's chain: client, then a stage a hop).
  expect(keys.slice(0, 2)).toEqual(['job', 'hop:0:planner']);
  expect(keys.indexOf('hop:1:researcher')).toBeLessThan(keys.indexOf('hop:2:writer'));
});
