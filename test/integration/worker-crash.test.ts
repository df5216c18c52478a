/**
 * A worker process SIGKILLed while the draft's model call is in flight. Without heartbeats the
 * server would wait out the draft's whole startToCloseTimeout (2 min) before retrying; with them
 * the lost attempt times out on its heartbeat and another worker finishes the job.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { decodeTimeoutType } from '@temporalio/common';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import type { JobResult } from '../../contracts';
import { startWorkerProcess, type WorkerProcess } from '../../bench/workers';
import { startJob } from '../../src/client';
import { openStore, type Store } from '../../src/store';
import { jobRequest, uniqueId } from '../helpers/rail';

/** A model endpoint that takes requests and never answers: the draft hangs in its model call. */
let model: http.Server;
let modelCalls = 0;
let modelCalled: Promise<void>;
let client: Client;
let connection: Connection;
let store: Store | undefined;
const workers: WorkerProcess[] = [];
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'handrail-crash-'));

beforeAll(async () => {
  let called!: () => void;
  modelCalled = new Promise((resolve) => (called = resolve));
  model = http.createServer(() => {
    modelCalls++;
    called();
  });
  await new Promise<void>((resolve) => model.listen(0, '127.0.0.1', resolve));
  connection = await Connection.connect({ address: inject('temporalAddress') });
  client = new Client({ connection, namespace: inject('namespace') });
});

afterAll(async () => {
  await Promise.all(workers.map((w) => w.kill()));
  model?.closeAllConnections();
  await new Promise((resolve) => model?.close(resolve));
  await store?.close();
  await connection?.close();
});

it('a worker killed mid-draft: the attempt times out on its heartbeat, another worker finishes, the CRM is written once', { timeout: 90_000 }, async () => {
  const taskQueue = uniqueId('crash');
  const common = { kind: 'handrail' as const, address: inject('temporalAddress'), taskQueue, dataDir, bundlePath: inject('workflowBundlePath') };
  const { port } = model.address() as AddressInfo;
  workers.push(
    await startWorkerProcess({
      ...common,
      env: {
        HANDRAIL_MODEL_BASE_URL: `http://127.0.0.1:${port}/v1`,
        HANDRAIL_MODEL: 'never-answers',
        HANDRAIL_MODEL_USD_PER_MTOK_IN: '1',
        HANDRAIL_MODEL_USD_PER_MTOK_OUT: '1',
        HANDRAIL_MODEL_TIMEOUT_MS: '600000',
      },
    }),
  );
  const request = jobRequest();
  const { handle } = await startJob(client, request, { taskQueue });
  await modelCalled;
  await workers[0]!.kill();
  // The second worker runs the offline drafter (no model), so its draft attempt completes.
  workers.push(await startWorkerProcess({ ...common, env: { HANDRAIL_MODEL_BASE_URL: '', HANDRAIL_MODEL: '' } }));

  const result: JobResult = await handle.result();
  expect(result.status).toBe('completed');
  expect(modelCalls).toBe(1);

  const events = (await handle.fetchHistory()).events ?? [];
  const activityType = new Map(events.map((e) => [String(e.eventId), e.activityTaskScheduledEventAttributes?.activityType?.name]));
  const draftStarts = events
    .map((e) => e.activityTaskStartedEventAttributes)
    .filter((a) => a && activityType.get(String(a.scheduledEventId)) === 'draft');
  expect(draftStarts).toHaveLength(1);
  expect(draftStarts[0]!.attempt).toBe(2);
  expect(decodeTimeoutType(draftStarts[0]!.lastFailure?.timeoutFailureInfo?.timeoutType)).toBe('HEARTBEAT');

  store = await openStore({ sqlitePath: path.join(dataDir, 'handrail.sqlite') });
  const writes = await store.listWrites(request.job_id);
  expect(writes).toHaveLength(1);
  expect(writes[0]!.idempotency_key).toBe(result.receipt?.idempotency_key);
});
