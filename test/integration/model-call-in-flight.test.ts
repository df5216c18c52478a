/**
 * A draft whose model call hangs, in a worker process of its own, while the worker is SIGKILLed
 * or the job is cancelled. Heartbeats make both reach the rail in seconds: without them the
 * server would wait out the draft's whole startToCloseTimeout (2 min) before retrying, and a
 * cancelled job's model request would run on, paid for, after nobody wanted it.
 */
import fs from 'node:fs';
import http from 'node:http';
import { completionAsStream } from '../../src/devtools/scripted-model';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { decodeTimeoutType } from '@temporalio/common';
import { afterAll, afterEach, beforeAll, expect, inject, it } from 'vitest';
import type { JobResult } from '../../contracts';
import type { History } from '../../bench/history';
import { startWorkerProcess, type WorkerProcess, type WorkerProcessOptions } from '../../bench/workers';
import { cancelJob, startJob, type JobHandle } from '../../src/operator/client';
import { openStore, type Store } from '../../src/worker/store';
import { jobRequest, uniqueId } from '../helpers/rail';

/** A model endpoint that takes requests and answers only when told; it notes each call. */
interface HungCall {
  /** Resolves when the caller closed the connection (aborted, or its process died). */
  closed: Promise<void>;
  /** Sends a chat-completions reply with this text. */
  answer(text: string): void;
}
let model: http.Server;
let calls: HungCall[] = [];
let onCall: (call: HungCall) => void = () => undefined;
let client: Client;
let connection: Connection;
let store: Store;
let workers: WorkerProcess[] = [];
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'handrail-in-flight-'));

beforeAll(async () => {
  model = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    const closed = new Promise<void>((resolve) => req.socket.once('close', () => resolve()));
    req.on('end', () => {
      const streamed = (JSON.parse(body) as { stream?: boolean }).stream === true;
      const call: HungCall = {
        closed,
        answer: (text) => {
          const completion = {
            choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }],
            usage: { prompt_tokens: 900, completion_tokens: 120 },
          };
          // A followed hop's model streams (src/worker/model/streaming.ts).
          if (streamed) res.writeHead(200, { 'content-type': 'text/event-stream' }).end(completionAsStream(completion));
          else res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(completion));
        },
      };
      calls.push(call);
      onCall(call);
    });
  });
  await new Promise<void>((resolve) => model.listen(0, '127.0.0.1', resolve));
  connection = await Connection.connect({ address: inject('temporalAddress') });
  client = new Client({ connection, namespace: inject('namespace') });
  store = await openStore({ dataDir });
});

afterEach(async () => {
  await Promise.all(workers.map((w) => w.kill()));
  workers = [];
  calls = [];
});

afterAll(async () => {
  model?.closeAllConnections();
  await new Promise((resolve) => model?.close(resolve));
  await store?.close();
  await connection?.close();
});

function nextModelCall(): Promise<HungCall> {
  return new Promise((resolve) => (onCall = resolve));
}

function workerOptions(taskQueue: string): WorkerProcessOptions {
  return {
    kind: 'handrail',
    address: inject('temporalAddress'),
    taskQueue,
    dataDir,
    bundlePath: inject('workflowBundlePath'),
  };
}

async function startWorkerWithHungModel(taskQueue: string): Promise<WorkerProcess> {
  const { port } = model.address() as AddressInfo;
  const worker = await startWorkerProcess({
    ...workerOptions(taskQueue),
    env: {
      HANDRAIL_MODEL_BASE_URL: `http://127.0.0.1:${port}/v1`,
      HANDRAIL_MODEL: 'never-answers',
      HANDRAIL_MODEL_USD_PER_MTOK_IN: '1',
      HANDRAIL_MODEL_USD_PER_MTOK_OUT: '1',
      HANDRAIL_MODEL_TIMEOUT_MS: '600000',
    },
  });
  workers.push(worker);
  return worker;
}

/** A job whose draft is in its model call, on a worker whose model never answers by itself. */
async function jobHungInDraft(prefix: string) {
  const taskQueue = uniqueId(prefix);
  const worker = await startWorkerWithHungModel(taskQueue);
  const request = jobRequest();
  const called = nextModelCall();
  const { handle } = await startJob(client, request, { taskQueue });
  return { taskQueue, worker, request, handle, call: await called };
}

type HistoryEvent = NonNullable<History['events']>[number];

/** The job's draft activity events (started, completed, failed, timed out), in order. */
async function draftEvents(handle: JobHandle): Promise<HistoryEvent[]> {
  const events = (await handle.fetchHistory()).events ?? [];
  const drafts = new Set(
    events
      .filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'draft')
      .map((e) => String(e.eventId)),
  );
  const scheduledBy = (e: HistoryEvent) =>
    e.activityTaskStartedEventAttributes?.scheduledEventId ??
    e.activityTaskCompletedEventAttributes?.scheduledEventId ??
    e.activityTaskFailedEventAttributes?.scheduledEventId ??
    e.activityTaskTimedOutEventAttributes?.scheduledEventId;
  return events.filter((e) => drafts.has(String(scheduledBy(e))));
}

it(
  'a worker killed mid-draft: the attempt times out on its heartbeat, another worker finishes, the CRM is written once',
  { timeout: 180_000 },
  async () => {
    const { taskQueue, worker: hung, request, handle } = await jobHungInDraft('crash');
    await hung.kill();
    // The second worker runs the offline drafter (no model), so its draft attempt completes.
    workers.push(
      await startWorkerProcess({
        ...workerOptions(taskQueue),
        env: { HANDRAIL_MODEL_BASE_URL: '', HANDRAIL_MODEL: '' },
      }),
    );

    const result: JobResult = await handle.result();
    expect(result.status).toBe('completed');
    expect(calls).toHaveLength(1);

    const draftStarts = (await draftEvents(handle)).map((e) => e.activityTaskStartedEventAttributes).filter(Boolean);
    expect(draftStarts).toHaveLength(1);
    expect(draftStarts[0]!.attempt).toBe(2);
    expect(decodeTimeoutType(draftStarts[0]!.lastFailure?.timeoutFailureInfo?.timeoutType)).toBe('HEARTBEAT');

    const writes = await store.listWrites(request.job_id);
    expect(writes).toHaveLength(1);
    expect(writes[0]!.write_key).toBe(result.receipt?.write_key);
  },
);

it(
  'a job cancelled mid-draft: the job ends cancelled at once, and the worker aborts the model request',
  { timeout: 120_000 },
  async () => {
    const { worker, request, handle, call } = await jobHungInDraft('cancel');

    await cancelJob(client, request.job_id);
    const result: JobResult = await handle.result();
    expect(result.status).toBe('cancelled');
    // The cancellation reaches the activity with its next heartbeat; the worker is still alive,
    // so the connection closing means the request was aborted, not that the process died.
    await call.closed;
    expect(worker.child.exitCode).toBeNull();
    expect(worker.child.signalCode).toBeNull();
  },
);

it(
  'a worker told to stop (SIGTERM) mid-draft drains: the model call finishes and its result is reported, not thrown away',
  { timeout: 120_000 },
  async () => {
    const { worker, handle, call } = await jobHungInDraft('drain');

    const stopped = worker.stop();
    // The shutdown has reached the activity (as a cancellation) by the time the model answers.
    await new Promise((r) => setTimeout(r, 1_000));
    expect(worker.child.exitCode).toBeNull();
    call.answer('## Triage summary\n\nThe customer was charged twice for the annual plan. [refund-policy.4]');
    await stopped;
    expect(await worker.exited).toBe('exit 0');

    const described = (await draftEvents(handle)).map((e) =>
      e.activityTaskStartedEventAttributes
        ? `started, attempt ${e.activityTaskStartedEventAttributes.attempt}`
        : e.activityTaskCompletedEventAttributes
          ? 'completed'
          : 'failed',
    );
    expect(described).toEqual(['started, attempt 1', 'completed']);
    await handle.terminate('test over: the next hop needs a worker');
  },
);
