/**
 * Chaos: jobs run while their worker process is SIGKILLed at random moments (and restarted) and
 * the dev server is restarted once on its SQLite file. Then: every job ended (none lost, none
 * stuck), each completed job wrote the CRM exactly once, nothing else wrote. Used by
 * `npm run chaos` and, with few jobs, by the suite. Owns its dev server, since it restarts it.
 */
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { decodeTimeoutType } from '@temporalio/common';
import type { JobRequest, JobResult } from '../contracts';
import { startJob } from '../src/operator/client';
import { sampleJobRequest } from '../src/devtools/samples/tickets';
import { openStore, type Store } from '../src/worker/store';
import { eventTypeCounts, fetchHistories } from './history';
import { HANDRAIL_WORKFLOWS, newTraceparent, runId, seededRandom, sleep, startLab, writeBundle, type Lab } from './lab';
import type { PropertyCheck } from './load-shape';
import { startWorkerProcess, type WorkerProcess } from './workers';

export interface ChaosOptions {
  jobs: number;
  /** Worker SIGKILLs, each followed by a restart. */
  kills: number;
  seed: number;
  /** Job starts and chaos events are spread over this window. */
  windowMs: number;
  /** How long every job gets to end after the window; past it, a running job counts as stuck. */
  settleMs: number;
  /** A prebuilt handrail workflow bundle (the suite has one); built here otherwise. */
  bundlePath?: string;
  log?: (msg: string) => void;
  /** Told how far the run is, as a line (the bench shows it live on a terminal). */
  onProgress?: (text: string) => void;
}

export interface ChaosReport {
  seed: number;
  jobs: number;
  kills: number;
  server_restarts: number;
  seconds: number;
  /** JobResult status per job, or the workflow's own status when it did not return one. */
  endings: Record<string, number>;
  /** Evidence the chaos hit work in flight: retried activities, timed-out workflow tasks. */
  activity_retries: number;
  /** Retries whose previous attempt went silent (its worker was killed, or its completion lost). */
  heartbeat_timeouts: number;
  workflow_task_timeouts: number;
  timeline: string[];
  checks: PropertyCheck[];
}

/** Endings a job may have; anything else (failed, timed out, still running) is lost or stuck. */
const ENDINGS = new Set(['completed', 'escalated', 'rejected']);

type ChaosEvent = { at: number; kind: 'kill' | 'server-restart' };

export async function runChaos(opts: ChaosOptions): Promise<ChaosReport> {
  const log = opts.log ?? (() => undefined);
  const random = seededRandom(opts.seed);
  const lab = await startLab('chaos');
  const started = Date.now();
  const timeline: string[] = [];
  const note = (msg: string) => {
    const line = `${((Date.now() - started) / 1000).toFixed(1)}s ${msg}`;
    timeline.push(line);
    log(line);
  };
  let worker: WorkerProcess | undefined;
  let store: Store | undefined;
  try {
    const taskQueue = `chaos-${runId()}`;
    const dataDir = path.join(lab.tmp, 'store');
    const workerOptions = {
      kind: 'handrail' as const,
      address: lab.address,
      taskQueue,
      dataDir,
      bundlePath: opts.bundlePath ?? (await writeBundle(HANDRAIL_WORKFLOWS, path.join(lab.tmp, 'handrail-workflows.js'))),
    };
    /** (Re)starts the worker unless one is alive; a worker that died on its own is noted. */
    const ensureWorker = async () => {
      if (worker && worker.child.exitCode === null && worker.child.signalCode === null) return;
      if (worker) note(`worker ${worker.pid} had exited on its own (${await worker.exited}); restarting`);
      worker = await startWorkerProcess(workerOptions);
      note(`worker ${worker.pid} polling`);
    };
    await ensureWorker();
    store = await openStore({ dataDir });

    const requests = Array.from({ length: opts.jobs }, (_, i) => chaosRequest(`${taskQueue}-job${i}`, i));
    const events = chaosSchedule(opts, random);
    // The window opens once the worker polls: setup time is not chaos time.
    const windowOpened = Date.now();
    await Promise.all([
      startStaggered(lab.client, requests, taskQueue, opts.windowMs, note),
      (async () => {
        for (const event of events) {
          await sleep(Math.max(0, windowOpened + event.at - Date.now()));
          if (event.kind === 'kill') {
            await ensureWorker();
            const victim = worker!;
            worker = undefined;
            await victim.kill();
            note(`worker ${victim.pid} SIGKILLed`);
            await sleep(200 + random() * 1_300);
            await ensureWorker();
          } else {
            note('dev server stopping');
            await lab.restartServer();
            note('dev server back on the same SQLite file');
            await ensureWorker();
          }
        }
      })(),
    ]);

    const open = await waitForEnd(lab, requests, windowOpened + opts.windowMs + opts.settleMs, ensureWorker, (closed) => opts.onProgress?.(`… ${closed} of ${requests.length} jobs closed`));
    note(open.length === 0 ? 'every job closed' : `${open.length} jobs still open at the deadline`);
    return {
      seed: opts.seed,
      jobs: opts.jobs,
      kills: events.filter((e) => e.kind === 'kill').length,
      server_restarts: events.filter((e) => e.kind === 'server-restart').length,
      seconds: (Date.now() - started) / 1000,
      ...(await outcome(lab.client, store, requests, open)),
      timeline,
    };
  } finally {
    await store?.close();
    await worker?.kill();
    await lab.stop();
  }
}

/** Most jobs can complete; every fourth has a wallet too small for the draft, so it escalates
 * and (nobody deciding) ends `escalated` after a short decision timeout. */
function chaosRequest(jobId: string, i: number): JobRequest {
  const request = { ...sampleJobRequest(jobId), decision_timeout: '3s', traceparent: newTraceparent() };
  return i % 4 === 3 ? { ...request, budget: { usd: 0.005, revisions: 1 } } : request;
}

/** Kills at random moments in the window, and one server restart between them, in time order. */
function chaosSchedule(opts: ChaosOptions, random: () => number): ChaosEvent[] {
  const events: ChaosEvent[] = Array.from({ length: opts.kills }, () => ({ at: opts.windowMs * (0.1 + 0.9 * random()), kind: 'kill' as const }));
  events.push({ at: opts.windowMs * (0.3 + 0.4 * random()), kind: 'server-restart' });
  return events.sort((a, b) => a.at - b.at);
}

/** Starts each job at its slot in the window, retrying while the server is down; a start that
 * reached the server before an error attaches to the existing job (startJob's id policy). */
async function startStaggered(client: Client, requests: JobRequest[], taskQueue: string, windowMs: number, note: (m: string) => void): Promise<void> {
  const t0 = Date.now();
  await Promise.all(
    requests.map(async (request, i) => {
      await sleep(Math.max(0, t0 + (windowMs * i) / requests.length - Date.now()));
      for (let attempt = 1; ; attempt++) {
        try {
          await startJob(client, request, { taskQueue });
          return;
        } catch (err) {
          if (attempt === 30) throw err;
          if (attempt === 1) note(`start of ${request.job_id} failed (${(err as Error).message.split('\n')[0]}); retrying`);
          await sleep(1_000);
        }
      }
    }),
  );
}

/** Waits until every job's workflow closed or the deadline passed; returns the ones still open. */
async function waitForEnd(lab: Lab, requests: JobRequest[], deadline: number, ensureWorker: () => Promise<void>, closed: (n: number) => void): Promise<string[]> {
  let open = requests.map((r) => r.job_id);
  while (open.length > 0 && Date.now() < deadline) {
    closed(requests.length - open.length);
    await ensureWorker();
    const running = await Promise.all(
      open.map((id) =>
        lab.client.workflow
          .getHandle(id)
          .describe()
          .then((d) => d.status.name === 'RUNNING')
          .catch(() => true),
      ),
    );
    open = open.filter((_, i) => running[i]);
    if (open.length > 0) await sleep(500);
  }
  return open;
}

async function outcome(client: Client, store: Store, requests: JobRequest[], open: string[]) {
  const ids = requests.map((r) => r.job_id);
  const closed = ids.filter((id) => !open.includes(id));
  const endings: Record<string, number> = {};
  const results = new Map<string, JobResult>();
  for (const id of closed) {
    const handle = client.workflow.getHandle(id);
    const ending = await handle.result().then(
      (r: JobResult) => {
        results.set(id, r);
        return r.status;
      },
      async () => (await handle.describe()).status.name.toLowerCase(),
    );
    endings[ending] = (endings[ending] ?? 0) + 1;
  }
  if (open.length > 0) endings.stuck = open.length;
  const stuck = new Map(await Promise.all(open.map(async (id) => [id, await pendingWork(client, id)] as const)));

  const writes = new Map(await Promise.all(ids.map(async (id) => [id, await store.listWrites(id)] as const)));
  const completed = [...results.values()].filter((r) => r.status === 'completed');
  const histories = await fetchHistories(client, closed);
  const events = eventTypeCounts(histories);
  const retried = histories.flatMap((h) => h.events ?? []).filter((e) => (e.activityTaskStartedEventAttributes?.attempt ?? 1) > 1);
  const heartbeatTimeouts = retried.filter(
    (e) => decodeTimeoutType(e.activityTaskStartedEventAttributes?.lastFailure?.timeoutFailureInfo?.timeoutType) === 'HEARTBEAT',
  ).length;
  const totalWrites = [...writes.values()].reduce((n, w) => n + w.length, 0);

  const check = (name: string, offenders: string[]): PropertyCheck => ({
    name,
    ok: offenders.length === 0,
    detail: offenders.length === 0 ? 'none off' : offenders.slice(0, 5).join('; '),
  });
  return {
    endings,
    activity_retries: retried.length,
    heartbeat_timeouts: heartbeatTimeouts,
    workflow_task_timeouts: events.WorkflowTaskTimedOut ?? 0,
    checks: [
      check(
        `every job (${ids.length}) ended completed, escalated or rejected: none lost, none stuck`,
        ids.filter((id) => !ENDINGS.has(results.get(id)?.status ?? '')).map((id) => `${id}: ${stuck.has(id) ? `still running, ${stuck.get(id)}` : (results.get(id)?.status ?? 'no result')}`),
      ),
      check(
        `every completed job (${completed.length}) wrote the CRM exactly once, and its receipt is that write`,
        completed.filter((r) => writes.get(r.job_id)?.length !== 1 || writes.get(r.job_id)![0]!.idempotency_key !== r.receipt?.idempotency_key).map((r) => `${r.job_id}: ${writes.get(r.job_id)?.length ?? 0} writes`),
      ),
      check(
        `no duplicate or stray writes (${totalWrites} writes for ${completed.length} completed jobs)`,
        ids.filter((id) => results.get(id)?.status !== 'completed' && (writes.get(id)?.length ?? 0) > 0).map((id) => `${id} (${results.get(id)?.status ?? 'open'}): ${writes.get(id)!.length} writes`),
      ),
    ],
  };
}

/** What a job still open at the deadline waits on, so a stuck job in a report can be explained. */
async function pendingWork(client: Client, id: string): Promise<string> {
  const { raw } = await client.workflow.getHandle(id).describe();
  const waiting = (raw.pendingActivities ?? []).map(
    (a) =>
      `${a.activityType?.name ?? 'activity'} attempt ${a.attempt ?? 1} ${a.lastStartedTime ? 'started' : 'scheduled'}` +
      (a.lastFailure?.message ? ` (last failure: ${a.lastFailure.message})` : ''),
  );
  if (raw.pendingWorkflowTask) waiting.push(`a workflow task, attempt ${raw.pendingWorkflowTask.attempt ?? 1}`);
  return waiting.length > 0 ? `waiting on ${waiting.join(', ')}` : 'waiting on a timer, a signal or an update';
}
