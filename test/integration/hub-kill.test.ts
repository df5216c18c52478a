/**
 * A worker SIGKILLed while a fan-out's branch is working, in a worker process of its own: the
 * `account` specialist is in its model call (a local endpoint that never answers) when the
 * process dies. The attempt times out on its heartbeat, a second worker (no model) runs it again,
 * and the job ends with one merge record, each stage charged once and one CRM write.
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
import { startWorkerProcess, type WorkerProcess, type WorkerProcessOptions } from '../../bench/workers';
import { startJob } from '../../src/operator/client';
import { openStore, type Store } from '../../src/worker/store';
import { jobRequest, stageActivities, uniqueId } from '../helpers/rail';

let model: http.Server;
let modelCalled: () => void = () => undefined;
let client: Client;
let connection: Connection;
let store: Store;
const workers: WorkerProcess[] = [];
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'handrail-hub-kill-'));

beforeAll(async () => {
  // Takes requests and never answers: whoever calls it is stuck there until it dies.
  model = http.createServer(() => modelCalled());
  await new Promise<void>((resolve) => model.listen(0, '127.0.0.1', resolve));
  connection = await Connection.connect({ address: inject('temporalAddress') });
  client = new Client({ connection, namespace: inject('namespace') });
  store = await openStore({ dataDir });
});

afterAll(async () => {
  await Promise.all(workers.map((w) => w.kill()));
  model?.closeAllConnections();
  await new Promise((resolve) => model?.close(resolve));
  await store?.close();
  await connection?.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

const workerOptions = (taskQueue: string, env: Record<string, string>): WorkerProcessOptions => ({
  kind: 'handrail',
  address: inject('temporalAddress'),
  taskQueue,
  dataDir,
  bundlePath: inject('workflowBundlePath'),
  env,
});

it(
  'a worker killed mid-branch: the branch runs again elsewhere, one merge record, no double charge, one write',
  { timeout: 180_000 },
  async () => {
    const taskQueue = uniqueId('hub-kill');
    const request = jobRequest({ pipeline: 'ticket-hub' });
    // An earlier ticket of the same customer, so the account specialist has a history to ask its model about.
    await store.patchCrmOnce(`${uniqueId('earlier')}:writeback:receipt.v1`, {
      ticket_id: `tkt_${uniqueId('old')}`,
      customer_id: request.ticket.customer_id,
      status: 'triaged',
      note: 'Earlier duplicate charge.',
    });

    const { port } = model.address() as AddressInfo;
    const hung = await startWorkerProcess(
      workerOptions(taskQueue, {
        HANDRAIL_MODEL_BASE_URL: `http://127.0.0.1:${port}/v1`,
        HANDRAIL_MODEL: 'never-answers',
        HANDRAIL_MODEL_USD_PER_MTOK_IN: '1',
        HANDRAIL_MODEL_USD_PER_MTOK_OUT: '1',
        HANDRAIL_MODEL_TIMEOUT_MS: '600000',
      }),
    );
    workers.push(hung);
    const inModel = new Promise<void>((resolve) => (modelCalled = resolve));
    const { handle } = await startJob(client, request, { taskQueue });
    await inModel;
    await hung.kill();
    workers.push(
      await startWorkerProcess(workerOptions(taskQueue, { HANDRAIL_MODEL_BASE_URL: '', HANDRAIL_MODEL: '' })),
    );

    const result: JobResult = await handle.result();
    expect(result.status).toBe('completed');

    // The branch was cut mid-work: its one activity's second attempt ran after a heartbeat timeout.
    const events = (await handle.fetchHistory()).events ?? [];
    const accountId = events.find(
      (e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'account',
    )!.eventId;
    const starts = events
      .map((e) => e.activityTaskStartedEventAttributes)
      .filter((s) => s && String(s.scheduledEventId) === String(accountId));
    expect(starts).toHaveLength(1);
    expect(starts[0]!.attempt).toBe(2);
    expect(decodeTimeoutType(starts[0]!.lastFailure?.timeoutFailureInfo?.timeoutType)).toBe('HEARTBEAT');

    // Every stage ran (and was charged) once; one merge, recorded once.
    const stages = await stageActivities(client, request.job_id);
    for (const stage of ['intake', 'policy', 'account', 'mergeBranches', 'brief', 'judge', 'writeback'])
      expect(
        stages.filter((s) => s === stage),
        stage,
      ).toHaveLength(1);
    expect(await store.findStageRecord(`${request.job_id}:merge:context.v1`)).not.toBeNull();
    const accepted = result.acks.filter((a) => a.ack === 'accepted' && a.settled_usd !== undefined);
    expect(accepted.map((a) => a.stage)).toEqual(
      expect.arrayContaining(['intake', 'policy', 'account', 'brief', 'judge', 'writeback']),
    );
    expect(accepted).toHaveLength(6);
    // The offline stages' nominal costs, each once: 0.001 + 0.002 + 0.001 + 0.01 + 0.005 + 0.001.
    expect(result.spent_usd).toBeCloseTo(0.02, 9);
    expect(await store.listWrites(request.job_id)).toHaveLength(1);
  },
);
