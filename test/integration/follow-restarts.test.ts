/**
 * A job's durable events survive its Temporal server and its store restarting mid-job: a follower
 * of a job waiting on a human sees the Temporal server (a dev server of this test's own, on its
 * data file) and the PostgreSQL store stopped and started again, resumes from its last id each
 * time its stream breaks, and after the decision reads every durable event once, in order, to
 * the end — the same ids and events a follower reading the finished job from the first is sent.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startLab, type Lab } from '../../bench/lab';
import { startWorkerProcess, type WorkerProcess } from '../../bench/workers';
import { BUILT_IN_PIPELINES } from '../../contracts/pipelines';
import { startDevPostgres, type DevPostgres } from '../../src/devtools/pg-dev';
import { decide, jobResult, startJob } from '../../src/operator/client';
import { apiUsers, sha256Token } from '../../src/servers/api-users';
import { buildHandoffsApi } from '../../src/servers/handoffs-api';
import { openStore, type Store } from '../../src/worker/store';
import { postgresUnavailable } from '../helpers/store-backends';
import { jobRequest, uniqueId } from '../helpers/rail';
import { sseFrames } from '../helpers/sse';

const TOKEN = 'tok-follow-restarts';
const pgSkip = postgresUnavailable();

interface Frame {
  id?: number;
  event: { type: string; name?: string; value?: { hop?: number; ack?: string }; result?: { status?: string } };
}

let lab: Lab;
let pg: DevPostgres;
let store: Store;
let worker: WorkerProcess;
const taskQueue = uniqueId('follow-restarts');

beforeAll(async () => {
  if (pgSkip) return;
  lab = await startLab('follow-restarts');
  pg = await startDevPostgres();
  const dataDir = fs.mkdtempSync(path.join(lab.tmp, 'worker-'));
  worker = await startWorkerProcess({
    kind: 'handrail',
    address: lab.address,
    taskQueue,
    dataDir,
    bundlePath: inject('workflowBundlePath'),
    env: { DATABASE_URL: pg.url },
  });
  store = await openStore({ databaseUrl: pg.url });
}, 180_000);

afterAll(async () => {
  await worker?.kill();
  await store?.close();
  await pg?.stop();
  await lab?.stop();
});

/** One SSE connection from `lastId`: frames until the job's end (true) or the stream breaks (false). */
async function readUntilBreak(url: string, lastId: number | undefined, onFrame: (f: Frame) => void): Promise<boolean> {
  try {
    const res = await fetch(url, {
      headers: { authorization: `Bearer ${TOKEN}`, ...(lastId ? { 'last-event-id': String(lastId) } : {}) },
    });
    if (res.status !== 200) return false;
    for await (const { at: _at, ...frame } of sseFrames<Frame['event']>(
      res.body as unknown as AsyncIterable<Uint8Array>,
    )) {
      onFrame(frame);
      if (frame.event.type === 'RUN_FINISHED') return true;
    }
  } catch {
    // A broken connection: the caller resumes from its last id.
  }
  return false;
}

describe.skipIf(pgSkip)(`following a job through restarts${pgSkip ? ` (skipped: ${pgSkip})` : ''}`, () => {
  it(
    'a Temporal server restart and a PostgreSQL restart while the job waits on a human: the follower, resuming from its last id, sees every durable event once, in order, the same as a reader of the finished job',
    { timeout: 240_000 },
    async () => {
      const api = buildHandoffsApi({
        store,
        users: apiUsers({ ops: { token_sha256: sha256Token(TOKEN), role: 'root' } }),
        temporal: lab.client,
        workspaces: { default: BUILT_IN_PIPELINES.map((p) => p.name) },
      });
      const base = await api.listen({ port: 0, host: '127.0.0.1' });
      try {
        // A wallet too small for the draft: the job waits on a human, through both restarts.
        const request = jobRequest({ budget: { usd: 0.005, revisions: 1 } });
        await startJob(lab.client, request, { taskQueue });
        const url = `${base}/jobs/${request.job_id}/events`;
        const seen: Frame[] = [];
        let lastId: number | undefined;
        let escalated!: () => void;
        const waiting = new Promise<void>((resolve) => (escalated = resolve));
        let breaks = 0;
        const following = (async () => {
          for (;;) {
            const ended = await readUntilBreak(url, lastId, (f) => {
              seen.push(f);
              if (f.id !== undefined) lastId = f.id;
              if (f.event.name === 'handrail.escalation') escalated();
            });
            if (ended) return;
            breaks++;
            await new Promise((r) => setTimeout(r, 300));
          }
        })();
        await waiting;
        await lab.restartServer();
        await pg.restart();
        await decide(lab.client, request.job_id, { action: 'top_up', actor: 'ops', usd: 1, revisions: 1 });
        await following;
        const result = await jobResult(lab.client, request.job_id);
        expect(result.status).toBe('completed');

        const numbered = seen.filter((f) => f.id !== undefined);
        const ids = numbered.map((f) => f.id!);
        expect(ids).toEqual([...new Set(ids)].sort((x, y) => x - y));
        // Every ack the rail recorded, the human's decisions among them, once and in its order.
        const acks = numbered
          .filter((f) => f.event.name === 'handrail.ack' || f.event.name === 'handrail.decision')
          .map((f) => [f.event.value!.hop, f.event.value!.ack]);
        expect(acks).toEqual(result.acks.map((a) => [a.hop, a.ack]));
        // The finished job read from the first: the same numbered events, nothing more, nothing less.
        const again: Frame[] = [];
        expect(await readUntilBreak(url, undefined, (f) => again.push(f))).toBe(true);
        expect(again.filter((f) => f.id !== undefined)).toEqual(numbered);
        expect(seen.at(-1)!.event).toMatchObject({ type: 'RUN_FINISHED', result: { status: 'completed' } });
        console.log(`follow-restarts: ${numbered.length} durable events, ${breaks} stream breaks resumed`);
      } finally {
        api.server.closeAllConnections();
        await api.close();
      }
    },
  );
});
