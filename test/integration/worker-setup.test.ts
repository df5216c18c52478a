/**
 * A worker refuses to start on a namespace that lacks the rail's search attributes: every job's
 * first upsert would otherwise fail its workflow task, again and again, with the job stuck.
 */
import { builtInPlugin } from '../../src/pipelines';
import fs from 'node:fs';
import { Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time';
import { NativeConnection } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { openStore, type Store } from '../../src/worker/store';
import { SEARCH_ATTRIBUTES } from '../../workflows/search-attributes';
import { WorkerSetupError, createHandrailWorkers, missingSearchAttributes } from '../../src/worker/worker';
import { uniqueId } from '../helpers/rail';

let connection: Connection;
let native: NativeConnection;
let store: Store;

beforeAll(async () => {
  connection = await Connection.connect({ address: inject('temporalAddress') });
  native = await NativeConnection.connect({ address: inject('temporalAddress') });
  store = await openStore({ sqlitePath: ':memory:' });
});
afterAll(async () => {
  await store?.close();
  await native?.close();
  await connection?.close();
});

describe("worker start-up: the namespace must know the rail's search attributes", () => {
  it("the suite's namespace has them all", async () => {
    expect(await missingSearchAttributes(native, inject('namespace'))).toEqual([]);
  });

  it('a fresh namespace without them is refused at start, naming every missing one', async () => {
    const namespace = uniqueId('bare').toLowerCase();
    await connection.workflowService.registerNamespace({
      namespace,
      workflowExecutionRetentionPeriod: msToTs('1 day'),
    });
    // A new namespace takes a moment to reach the frontend's cache.
    for (let tries = 0; ; tries++) {
      try {
        await missingSearchAttributes(native, namespace);
        break;
      } catch (error) {
        if (tries > 50) throw error;
        await new Promise((r) => setTimeout(r, 200));
      }
    }
    const start = createHandrailWorkers({
      connection: native,
      plugin: builtInPlugin(),
      config: { namespace, taskQueue: uniqueId('unused') },
      store,
      workflowBundle: { code: fs.readFileSync(inject('workflowBundlePath'), 'utf8') },
    });
    await expect(start).rejects.toThrow(WorkerSetupError);
    const names = Object.entries(SEARCH_ATTRIBUTES);
    await expect(start).rejects.toThrow(
      `namespace "${namespace}" lacks the search attributes ${names.map(([name, type]) => `${name} (${type})`).join(', ')}`,
    );
    // Each with the exact command that registers it.
    for (const [name, type] of names) {
      await expect(start).rejects.toThrow(
        `temporal operator search-attribute create --namespace ${namespace} --name ${name} --type ${type}`,
      );
    }
  });
});
