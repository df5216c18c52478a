/**
 * Following a job through faults, over SSE with AG-UI frames: the job's worker is SIGKILLed at a
 * point the stream itself chooses (the first hop seen starting), the API server the follower
 * reads from is shut down mid-job and the follower goes on at a second server on the same store
 * and Temporal server with its last id. The follower sees every durable event once, in order,
 * and the job's end. Also: 1,000 followers of one job share one reader, and a follower that stops
 * taking events is dropped as lagged instead of holding memory.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection, type WorkflowClientInterceptor } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startWorkerProcess, type WorkerProcess } from '../../bench/workers';
import { BUILT_IN_PIPELINES } from '../../contracts/pipelines';
import { handrailDataConverter } from '../../src/codec';
import { cancelJob, jobResult, startJob } from '../../src/operator/client';
import { apiUsers, sha256Token } from '../../src/servers/api-users';
import { buildHandoffsApi } from '../../src/servers/handoffs-api';
import { JobFeeds, type FeedItem } from '../../src/stream/feeds';
import { openStore, type Store } from '../../src/worker/store';
import { jobRequest, uniqueId } from '../helpers/rail';
import { sseFrames } from '../helpers/sse';

const TOKEN = 'tok-follow-faults';
const users = apiUsers({ ops: { token_sha256: sha256Token(TOKEN), role: 'user' } });
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'handrail-follow-faults-'));
const taskQueue = uniqueId('follow-faults');

let connection: Connection;
let store: Store;
const workers: WorkerProcess[] = [];
const calls: Record<string, number> = {};

/** A client that counts the rail's queries it asks, by name. */
function countingClient(): Client {
  const counter: WorkflowClientInterceptor = {
    query: (input, next) => ((calls[input.queryType] = (calls[input.queryType] ?? 0) + 1), next(input)),
  };
  return new Client({
    connection,
    namespace: inject('namespace'),
    dataConverter: handrailDataConverter(),
    interceptors: { workflow: [counter] },
  });
}

function apiServer() {
  return buildHandoffsApi({
    store,
    users,
    temporal: countingClient(),
    workspaces: { [inject('namespace')]: BUILT_IN_PIPELINES.map((p) => p.name) },
  });
}

const startWorker = async () => {
  const worker = await startWorkerProcess({
    kind: 'handrail',
    address: inject('temporalAddress'),
    taskQueue,
    dataDir,
    bundlePath: inject('workflowBundlePath'),
  });
  workers.push(worker);
  return worker;
};

beforeAll(async () => {
  connection = await Connection.connect({ address: inject('temporalAddress') });
  store = await openStore({ dataDir });
  await startWorker();
});
afterAll(async () => {
  await Promise.all(workers.map((w) => w.kill()));
  await store?.close();
  await connection?.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

interface Frame {
  id?: number;
  event: { type: string; stepName?: string; name?: string; value?: { hop?: number; ack?: string }; result?: unknown };
}

/** Reads a job's SSE stream frame by frame, handing each to `onFrame` until it says stop or the stream ends. */
async function readFrames(
  url: string,
  lastId: number | undefined,
  onFrame: (f: Frame) => 'stop' | void,
): Promise<void> {
  const abort = new AbortController();
  const res = await fetch(url, {
    headers: { authorization: `Bearer ${TOKEN}`, ...(lastId ? { 'last-event-id': String(lastId) } : {}) },
    signal: abort.signal,
  });
  expect(res.status).toBe(200);
  try {
    for await (const { at: _at, ...frame } of sseFrames<Frame['event']>(
      res.body as unknown as AsyncIterable<Uint8Array>,
    ))
      if (onFrame(frame) === 'stop') return;
  } finally {
    abort.abort();
  }
}

describe('following a job through faults', () => {
  it(
    'a worker SIGKILLed when the stream shows a hop starting, the first API server shut down mid-job: resumed at a second server from its last id, the follower sees every durable event once, in order, to the end',
    { timeout: 150_000 },
    async () => {
      const [a, b] = [apiServer(), apiServer()];
      const baseA = await a.listen({ port: 0, host: '127.0.0.1' });
      const baseB = await b.listen({ port: 0, host: '127.0.0.1' });
      try {
        const request = jobRequest();
        await startJob(countingClient(), request, { taskQueue });
        const seen: Frame[] = [];
        let killed = false;
        // Server A: until the stream shows hop 1 starting; the worker is killed right then (and a
        // new one started), and a few frames later the follower leaves A, which shuts down.
        await readFrames(`${baseA}/jobs/${request.job_id}/events`, undefined, (f) => {
          seen.push(f);
          if (!killed && f.event.type === 'STEP_STARTED' && f.event.stepName?.startsWith('hop 1:')) {
            killed = true;
            void workers[0]!.kill().then(startWorker);
            return 'stop';
          }
        });
        expect(killed).toBe(true);
        await a.close();
        const last = seen.filter((f) => f.id !== undefined).at(-1)!.id!;
        await readFrames(`${baseB}/jobs/${request.job_id}/events`, last, (f) => {
          seen.push(f);
          if (f.event.type === 'RUN_FINISHED' || f.event.type === 'RUN_ERROR') return 'stop';
        });
        const numbered = seen.filter((f) => f.id !== undefined);
        const ids = numbered.map((f) => f.id!);
        expect(ids).toEqual([...new Set(ids)].sort((x, y) => x - y));
        expect(seen.at(-1)!.event).toMatchObject({ type: 'RUN_FINISHED', result: { status: 'completed' } });
        const result = await jobResult(countingClient(), request.job_id);
        const acks = numbered
          .filter((f) => f.event.name === 'handrail.ack')
          .map((f) => [f.event.value!.hop, f.event.value!.ack]);
        expect(acks).toEqual(result.acks.map((x) => [x.hop, x.ack]));
        const steps = numbered.filter((f) => f.event.type === 'STEP_STARTED').map((f) => f.event.stepName);
        expect(steps).toEqual([...new Set(steps)]);
      } finally {
        await a.close();
        await b.close();
      }
    },
  );

  it(
    '1,000 followers of a running job over SSE each get every event, once and in order, to its end, and one reader asks the rail for all of them',
    { timeout: 150_000 },
    async () => {
      const api = apiServer();
      const base = await api.listen({ port: 0, host: '127.0.0.1' });
      try {
        // A wallet too small for the draft: the job waits for a human, running, while all connect.
        const request = jobRequest({ budget: { usd: 0.005, revisions: 1 } });
        await startJob(countingClient(), request, { taskQueue });
        let waiting = 0;
        const followers = Array.from({ length: 1_000 }, async () => {
          const ids: number[] = [];
          let end = '';
          let counted = false;
          await readFrames(`${base}/jobs/${request.job_id}/events`, undefined, (f) => {
            if (f.id !== undefined) ids.push(f.id);
            if (f.event.name === 'handrail.escalation' && !counted) {
              counted = true;
              waiting++;
            }
            if (f.event.type === 'RUN_FINISHED') {
              end = (f.event.result as { status: string }).status;
              return 'stop';
            }
          });
          return { ids, end };
        });
        const deadline = Date.now() + 90_000;
        while (waiting < 1_000 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
        expect(waiting).toBe(1_000);
        for (const k of Object.keys(calls)) delete calls[k];
        await cancelJob(countingClient(), request.job_id);
        const seen = await Promise.all(followers);
        const everyId = [...new Set(seen.flatMap((f) => f.ids))].sort((x, y) => x - y);
        for (const f of seen) expect([f.ids, f.end]).toEqual([everyId, 'cancelled']);
        // From the cancel to the end, one reader asks the rail a few times; 1,000 would ask 1,000s.
        expect(Object.values(calls).reduce((a, b) => a + b, 0)).toBeLessThan(50);
      } finally {
        api.server.closeAllConnections();
        await api.close();
      }
    },
  );

  it('a feed following a job from its start asks the rail nothing, however many workflow tasks the job completes: before its first move there is nothing to ask, after it each delivery carries the records', async () => {
    for (const k of Object.keys(calls)) delete calls[k];
    const plain = new Client({ connection, namespace: inject('namespace'), dataConverter: handrailDataConverter() });
    const request = jobRequest();
    await startJob(plain, request, { taskQueue });
    const items: FeedItem[] = [];
    for await (const item of new JobFeeds(countingClient(), store).follow(
      request.job_id,
      0,
      new AbortController().signal,
    ))
      items.push(item);
    expect(items.at(-1)).toMatchObject({ kind: 'event', event: { type: 'job_finished', status: 'completed' } });
    const history = await plain.workflow.getHandle(request.job_id).fetchHistory();
    const tasks = (history.events ?? []).filter(
      (e) => e.eventType === temporal.api.enums.v1.EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED,
    ).length;
    expect(tasks).toBeGreaterThan(3);
    const asked = Object.values(calls).reduce((a, b) => a + b, 0);
    expect(asked).toBe(0);
  });

  it('a follower that stops taking events is dropped as lagged once its queue is full; the others go on to the end', async () => {
    // Ten: more than the few events one history move brings a reader, fewer than the job's ~30.
    const feeds = new JobFeeds(countingClient(), store, { queueLimit: 10 });
    const request = jobRequest();
    await startJob(countingClient(), request, { taskQueue });
    const abort = new AbortController();
    const slow = feeds.follow(request.job_id, 0, abort.signal);
    const first = await slow.next();
    expect(first.done).toBe(false);
    const fast: FeedItem[] = [];
    for await (const item of feeds.follow(request.job_id, 0, new AbortController().signal)) fast.push(item);
    expect(fast.at(-1)).toMatchObject({ kind: 'event', event: { type: 'job_finished', status: 'completed' } });
    const rest: FeedItem[] = [];
    for await (const item of slow) rest.push(item);
    expect(rest).toEqual([{ kind: 'lagged' }]);
    expect(feeds.running).toBe(0);
  });
});
