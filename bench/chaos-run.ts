/**
 * Chaos: jobs run while their worker process is SIGKILLed at random moments (and restarted) and
 * the Temporal server is restarted once (on a cluster, its PostgreSQL too). Then: every job ended (none lost, none stuck), each
 * completed job wrote the CRM exactly once, nothing else wrote. Used by `npm run chaos` and, with
 * few jobs, by the suite. Owns its server, since it restarts it: a dev server on its SQLite file
 * with one worker process (the default), or, with `cluster`, a cluster of its own (its own data dir
 * and ports: the PostgreSQL-backed server and the per-stage workers, general and writer, either
 * of which a kill may hit; its PostgreSQL, which holds the server's persistence and visibility,
 * the store and the CRM, is restarted once while jobs run).
 */
import { BUILT_IN_PIPELINES } from '../contracts/pipelines';
import path from 'node:path';
import { Client } from '@temporalio/client';
import { decodeTimeoutType } from '@temporalio/common';
import type { JobRequest, JobResult } from '../contracts';
import { startOwnCluster } from '../src/devtools/cluster/own-cluster';
import { ensurePostgres, stopClusterPostgres } from '../src/devtools/cluster/postgres';
import { runningPid, stopDaemon } from '../src/devtools/cluster/processes';
import {
  clusterEnv,
  crmUrl,
  storeUrl,
  type ClusterPorts,
  type ClusterSettings,
} from '../src/devtools/cluster/settings';
import { stopOnSignal } from '../src/devtools/stop-on-signal';
import { startWorker, workerEnv, workerUp } from '../src/devtools/cluster/workers';
import { CRM_DATABASE_URL_ENV, type WorkerRole } from '../src/config';
import { startJob } from '../src/operator/client';
import { sampleJobRequest } from '../src/devtools/samples/tickets';
import { openStore, type CrmStore, type EffectLedger, type Store } from '../src/worker/store';
import { eventTypeCounts, fetchHistories } from './history';
import { HANDRAIL_WORKFLOWS, newTraceparent, runId, seededRandom, sleep, startLab, writeBundle } from './lab';
import type { PropertyCheck } from './load-shape';
import { startWorkerProcess, type WorkerProcess } from './workers';
import { payingRequest, startWriteChaos, type Landing, type WriteChaos, type WriteChaosReport } from './chaos-writes';
import { MODES } from './paying-worker';
import { startSoakWorker, type SoakWorker } from './soak-worker';

export interface ChaosOptions {
  jobs: number;
  /** Worker SIGKILLs, each followed by a restart. */
  kills: number;
  seed: number;
  /** Job starts and chaos events are spread over this window. */
  windowMs: number;
  /** How long every job gets to end after the window (after the last chaos event, when events
   * outlast it); past it, a running job counts as stuck. */
  settleMs: number;
  /** A prebuilt handrail workflow bundle (the suite has one); built here otherwise. */
  bundlePath?: string;
  /** Run on a cluster of its own (`npm run chaos -- --cluster`) instead of a dev server. */
  cluster?: boolean;
  /** Chaos for writes (`--writes`, bench/chaos-writes.ts): the writer pays through payments APIs
   * that inject this many network faults, and the `kills` land while a committed payment's answer
   * is held (between send and record) instead of at random moments. Dev server only, but for the
   * soak, where `kills` stay at random moments and `writes.kills` land between send and record. */
  writes?: { faults: number; landing?: Landing; kills?: number };
  /** Temporal server restarts in the window (1 when unset). */
  serverRestarts?: number;
  /** PostgreSQL restarts in the window, on a cluster (1 when unset). */
  databaseRestarts?: number;
  /** The soak (`--cluster --soak`, needs `writes`): jobs of every built-in pipeline, those whose
   * writer is ticket-triage's writeback (ticket-triage, ticket-hub) paying through the write chaos's
   * APIs, the others writing the CRM; worker processes started from a prebuilt bundle (bench/soak-worker.ts),
   * so restarts take seconds; the `kills` at random moments, plus `writes.kills` of the writer
   * while a payment it sent is held. */
  soak?: boolean;
  log?: (msg: string) => void;
  /** Told how far the run is, as a line (the bench shows it live on a terminal). */
  onProgress?: (text: string) => void;
}

export interface ChaosReport {
  seed: number;
  jobs: number;
  kills: number;
  /** Kills per worker killed (the cluster's general worker and writer; the dev server's one). */
  kills_by_worker: Record<string, number>;
  server_restarts: number;
  /** PostgreSQL restarts (the cluster's; a dev server has none). */
  database_restarts: number;
  /** `dev server` or `cluster`. */
  server: string;
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
  /** With `writes`: the table per reconcile mode. */
  writes?: WriteChaosReport;
}

/** Endings a job may have; anything else (failed, timed out, still running) is lost or stuck. */
const ENDINGS = new Set(['completed', 'escalated', 'rejected']);

type ChaosEvent = { at: number; kind: 'kill' | 'server-restart' | 'database-restart' };

/** What chaos runs on: a server it may restart, worker processes it may kill, where writes land. */
interface ChaosWorld {
  server: string;
  client: Client;
  taskQueue: string;
  /** Where the writers write (the CRM), to count writes per job. */
  crm: CrmStore;
  /** The worker's effect ledger (in its store), to read how writes in doubt were settled. */
  ledger: EffectLedger;
  /** (Re)starts every worker that is not alive; one that died on its own is noted. */
  ensureWorkers(): Promise<void>;
  /** SIGKILLs one live worker (`target`, or one picked with `random` when there are several); names it. */
  killWorker(random: () => number, target?: string): Promise<string>;
  restartServer(): Promise<void>;
  /** Stops the database everything keeps its state in and, after `downMs`, starts it on the same
   * data; absent when there is none to restart (the dev server's SQLite files). */
  restartDatabase?(downMs: number): Promise<void>;
  stop(): Promise<void>;
}

/** A dev server on its SQLite file and one worker process (role all) with an SQLite store. */
async function devServerWorld(
  opts: ChaosOptions,
  note: (msg: string) => void,
  workerEnv: Record<string, string> = {},
): Promise<ChaosWorld> {
  const lab = await startLab('chaos');
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
      bundlePath:
        opts.bundlePath ?? (await writeBundle(HANDRAIL_WORKFLOWS, path.join(lab.tmp, 'handrail-workflows.js'))),
      env: workerEnv,
    };
    // One start at a time: a kill's restart and the wait's check may ask at once, and two starts
    // would leave a worker nobody stops.
    let starting: Promise<void> | undefined;
    const startIfGone = async () => {
      if (worker && worker.child.exitCode === null && worker.child.signalCode === null) return;
      if (worker) note(`worker ${worker.pid} had exited on its own (${await worker.exited}); restarting`);
      worker = await startWorkerProcess(workerOptions);
      note(`worker ${worker.pid} polling`);
    };
    const ensureWorkers = () => (starting ??= startIfGone().finally(() => (starting = undefined)));
    await ensureWorkers();
    const crm = (store = await openStore({ dataDir }));
    return {
      server: 'dev server',
      client: lab.client,
      taskQueue,
      crm,
      ledger: crm,
      ensureWorkers,
      async killWorker() {
        await ensureWorkers();
        const victim = worker!;
        worker = undefined;
        await victim.kill();
        return `worker ${victim.pid}`;
      },
      restartServer: () => lab.restartServer(),
      async stop() {
        await crm.close();
        await worker?.kill();
        await lab.stop();
      },
    };
  } catch (err) {
    await store?.close();
    await worker?.kill();
    await lab.stop();
    throw err;
  }
}

/** Off the default cluster, the dev server and the cluster integration test (test/integration/cluster.test.ts). */
const CHAOS_CLUSTER_PORTS: ClusterPorts = { postgres: 5633, frontend: 10333, ui: 10433 };

/** A cluster of its own (temp data dir, CHAOS_CLUSTER_PORTS) with its general worker and writer. */
async function clusterWorld(note: (msg: string) => void): Promise<ChaosWorld> {
  const cluster = await startOwnCluster({ name: 'chaos', ports: CHAOS_CLUSTER_PORTS, workers: true, log: note });
  const s = cluster.settings;
  const stores: Store[] = [];
  // The cluster goes down (and its data with it) even when a store fails to close.
  const closeAll = async () => {
    try {
      for (const store of stores) await store.close();
    } finally {
      await cluster.down();
    }
  };
  try {
    const store = await openStore({ databaseUrl: storeUrl(s) });
    stores.push(store);
    const crm = await openStore({ databaseUrl: crmUrl(s) });
    stores.push(crm);
    const ensureWorkers = async () => {
      for (const worker of s.workers) {
        if (workerUp(worker)) continue;
        note(`${worker.name} down; restarting`);
        const pid = await startWorker(worker, workerEnv(clusterEnv(s), worker));
        note(`${worker.name} ${pid} polling`);
      }
    };
    return {
      server: 'cluster',
      client: new Client({ connection: cluster.connection, namespace: s.namespace }),
      taskQueue: s.taskQueue,
      crm,
      ledger: store,
      ensureWorkers,
      async killWorker(random) {
        await ensureWorkers();
        const victim = s.workers[Math.floor(random() * s.workers.length)]!;
        const pid = runningPid(victim)!;
        process.kill(-pid, 'SIGKILL');
        // Its pid file stays: stopDaemon waits until the group is gone and removes it.
        await stopDaemon(victim);
        return `${victim.name} ${pid}`;
      },
      restartServer: () => cluster.restartServer(),
      restartDatabase: (downMs) => restartClusterPostgres(s, downMs, note),
      stop: closeAll,
    };
  } catch (err) {
    await closeAll().catch(() => undefined);
    throw err;
  }
}

/**
 * The soak's cluster: a cluster of its own (CHAOS_CLUSTER_PORTS) without its workers, and the two
 * sides of the split as bench/soak-worker.ts processes from a prebuilt bundle, the writer paying
 * through the payments APIs (`workerEnv`). Kills take turns (a kill waits for the one before to
 * restart its worker); `ensureWorkers` starts each side at most once at a time.
 */
async function soakWorld(
  opts: ChaosOptions,
  note: (msg: string) => void,
  payingEnv: Record<string, string>,
): Promise<ChaosWorld> {
  const cluster = await startOwnCluster({ name: 'chaos', ports: CHAOS_CLUSTER_PORTS, workers: false, log: note });
  const s = cluster.settings;
  const stores: Store[] = [];
  const workers = new Map<WorkerRole, SoakWorker | undefined>([
    ['general', undefined],
    ['writer', undefined],
  ]);
  const closeAll = async () => {
    try {
      for (const w of workers.values()) await w?.kill();
      for (const store of stores) await store.close();
    } finally {
      await cluster.down();
    }
  };
  try {
    const bundlePath =
      opts.bundlePath ?? (await writeBundle(HANDRAIL_WORKFLOWS, path.join(cluster.dataDir, 'handrail-workflows.js')));
    const env = {
      ...clusterEnv(s),
      HANDRAIL_WORKFLOW_BUNDLE: bundlePath,
      [CRM_DATABASE_URL_ENV]: crmUrl(s),
      ...payingEnv,
    };
    const starting = new Map<WorkerRole, Promise<void>>();
    const startIfGone = async (role: WorkerRole) => {
      const worker = workers.get(role);
      if (worker?.alive()) return;
      if (worker) note(`${role} ${worker.pid} had exited on its own (${await worker.exited}); restarting`);
      workers.set(role, undefined);
      const started = await startSoakWorker(role, env, path.join(cluster.dataDir, `${role}.log`));
      workers.set(role, started);
      note(`${role} ${started.pid} polling`);
    };
    const ensure = (role: WorkerRole): Promise<void> => {
      let p = starting.get(role);
      if (!p) {
        p = startIfGone(role).finally(() => starting.delete(role));
        starting.set(role, p);
      }
      return p;
    };
    const ensureWorkers = async () => {
      await Promise.all([...workers.keys()].map(ensure));
    };
    await ensureWorkers();
    const store = await openStore({ databaseUrl: storeUrl(s) });
    stores.push(store);
    const crm = await openStore({ databaseUrl: crmUrl(s) });
    stores.push(crm);
    let turn: Promise<unknown> = Promise.resolve();
    return {
      server: 'cluster',
      client: new Client({ connection: cluster.connection, namespace: s.namespace }),
      taskQueue: s.taskQueue,
      crm,
      ledger: store,
      ensureWorkers,
      killWorker(random, target) {
        const kill = turn.then(async () => {
          await ensureWorkers();
          const roles = [...workers.keys()];
          const role = (target as WorkerRole | undefined) ?? roles[Math.floor(random() * roles.length)]!;
          const victim = workers.get(role)!;
          workers.set(role, undefined);
          await victim.kill();
          return `${role} ${victim.pid}`;
        });
        turn = kill.catch(() => undefined);
        return kill;
      },
      restartServer: () => cluster.restartServer(),
      restartDatabase: (downMs) => restartClusterPostgres(s, downMs, note),
      stop: closeAll,
    };
  } catch (err) {
    await closeAll().catch(() => undefined);
    throw err;
  }
}

/** Stops the cluster's PostgreSQL at once, waits `downMs`, and starts it again on its data. */
async function restartClusterPostgres(s: ClusterSettings, downMs: number, note: (msg: string) => void): Promise<void> {
  if (!stopClusterPostgres(s))
    throw new Error(`the cluster's PostgreSQL (${s.host}:${s.postgres.port}) was not running`);
  await sleep(downMs);
  await ensurePostgres(s, note);
}

export async function runChaos(opts: ChaosOptions): Promise<ChaosReport> {
  if (opts.writes && opts.cluster && !opts.soak)
    throw new Error('chaos for writes runs on a dev server (no --cluster), or on a cluster in the soak (--soak)');
  if (opts.soak && !(opts.cluster && opts.writes))
    throw new Error('the soak runs on a cluster (--cluster) with writes');
  const log = opts.log ?? (() => undefined);
  const random = seededRandom(opts.seed);
  const started = Date.now();
  const timeline: string[] = [];
  const note = (msg: string) => {
    const line = `${((Date.now() - started) / 1000).toFixed(1)}s ${msg}`;
    timeline.push(line);
    log(line);
  };
  let writes: WriteChaos | undefined;
  let world: Promise<ChaosWorld> | undefined;
  // Every server it started stops on success, on failure, and on SIGTERM or SIGINT.
  const stop = stopOnSignal(async () => {
    try {
      await (await world?.catch(() => undefined))?.stop();
    } finally {
      await writes?.close();
    }
  });
  try {
    return await (async () => {
      const paying = opts.soak ? soakRequests('', opts.jobs).paying.length : opts.jobs;
      writes = opts.writes
        ? await startWriteChaos(
            { ...opts.writes, kills: opts.soak ? (opts.writes.kills ?? 0) : opts.kills, jobs: paying },
            random,
          )
        : undefined;
      world = opts.soak
        ? soakWorld(opts, note, writes!.workerEnv)
        : opts.cluster
          ? clusterWorld(note)
          : devServerWorld(opts, note, writes?.workerEnv);
      return chaosIn(await world, opts, { random, started, timeline, note, writes });
    })();
  } finally {
    await stop();
  }
}

/** The soak's jobs, in turn: ticket-triage, ticket-hub, ticket-triage, support-routing,
 * ticket-triage, research-brief. The ticket-triage jobs pay, taking the reconcile modes in turn;
 * the others write the CRM (ticket-hub's writeback is ticket-triage's card, but the paying
 * writeback reads ticket-triage's inputs), every fourth of them with a wallet too small for its
 * draft (as in the plain chaos). */
export function soakRequests(taskQueue: string, jobs: number): { all: JobRequest[]; paying: JobRequest[] } {
  const order = ['ticket-triage', 'ticket-hub', 'ticket-triage', 'support-routing', 'ticket-triage', 'research-brief'];
  const known = new Set(BUILT_IN_PIPELINES.map((p) => p.name));
  const all: JobRequest[] = [];
  const paying: JobRequest[] = [];
  let writingCrm = 0;
  for (let i = 0; i < jobs; i++) {
    const pipeline = order[i % order.length]!;
    if (!known.has(pipeline)) throw new Error(`the soak names a pipeline that is not built in: ${pipeline}`);
    if (pipeline === 'ticket-triage') {
      const request = {
        ...payingRequest(`${taskQueue}-${pipeline}`, i, MODES[paying.length % MODES.length]!),
        pipeline,
      };
      paying.push(request);
      all.push(request);
    } else all.push({ ...chaosRequest(`${taskQueue}-${pipeline}-job${i}`, writingCrm++), pipeline });
  }
  return { all, paying };
}

interface ChaosRun {
  random: () => number;
  started: number;
  timeline: string[];
  note: (msg: string) => void;
  writes: WriteChaos | undefined;
}

async function chaosIn(world: ChaosWorld, opts: ChaosOptions, run: ChaosRun): Promise<ChaosReport> {
  const { random, started, timeline, note, writes } = run;
  let human: { stop(): Promise<void> } | undefined;
  try {
    const { client, taskQueue } = world;
    const soak = opts.soak ? soakRequests(taskQueue, opts.jobs) : undefined;
    const requests =
      soak?.all ??
      writes?.requests(taskQueue) ??
      Array.from({ length: opts.jobs }, (_, i) => chaosRequest(`${taskQueue}-job${i}`, i));
    // The jobs that pay (with writes), checked by the payments APIs' logs, not by the CRM.
    const paying = soak?.paying ?? (writes ? requests : []);
    const pays = new Set(paying.map((r) => r.job_id));
    const killed: Record<string, number> = {};
    // With writes, kills land at payments' commits (armed here): the writer's, on a cluster. The
    // schedule keeps the restarts, and in the soak the random kills too.
    writes?.armKills(() =>
      killAndRestart(world, random, note, killed, {
        when: 'while a payment it sent was held',
        ...(opts.soak ? { target: 'writer' } : {}),
      }),
    );
    human = writes?.decide(client, taskQueue, world.ledger, note);
    const events = chaosSchedule(
      writes && !opts.soak ? { ...opts, kills: 0 } : opts,
      random,
      world.restartDatabase !== undefined,
    );
    // The window opens once the worker polls: setup time is not chaos time.
    const windowOpened = Date.now();
    await Promise.all([
      startStaggered(client, requests, taskQueue, opts.windowMs, note),
      (async () => {
        for (const event of events) {
          await sleep(Math.max(0, windowOpened + event.at - Date.now()));
          if (event.kind === 'kill') await killAndRestart(world, random, note, killed);
          else if (event.kind === 'server-restart') {
            note(`${world.server} stopping`);
            await world.restartServer();
            note(`${world.server} back on the same data`);
            await world.ensureWorkers();
          } else {
            note('PostgreSQL stopping');
            await world.restartDatabase!(500 + random() * 2_500);
            note('PostgreSQL back on the same data');
            await world.ensureWorkers();
          }
        }
      })(),
    ]);

    // Events that outlast the window (many kills, each waiting for its worker to poll again) push
    // the settle time back: jobs get it after the last of them.
    const open = await waitForEnd(
      client,
      requests,
      Math.max(windowOpened + opts.windowMs, Date.now()) + opts.settleMs,
      () => world.ensureWorkers(),
      (closed) => opts.onProgress?.(`… ${closed} of ${requests.length} jobs closed`),
    );
    note(open.length === 0 ? 'every job closed' : `${open.length} jobs still open at the deadline`);
    const ended = await outcome(client, world.crm, requests, open, pays);
    const writeReport = await writes?.report(ended.results, paying, world.ledger);
    const { results: _results, ...shown } = ended;
    return {
      seed: opts.seed,
      jobs: opts.jobs,
      kills: Object.values(killed).reduce((a, b) => a + b, 0),
      kills_by_worker: killed,
      server_restarts: events.filter((e) => e.kind === 'server-restart').length,
      database_restarts: events.filter((e) => e.kind === 'database-restart').length,
      server: world.server,
      seconds: (Date.now() - started) / 1000,
      ...shown,
      checks: [...shown.checks, ...(writeReport?.checks ?? [])],
      timeline,
      ...(writeReport ? { writes: writeReport } : {}),
    };
  } finally {
    // No kill or decision once the world stops: a payment committing now must not restart a worker.
    writes?.armKills(undefined);
    await human?.stop();
    // runChaos stops the world.
  }
}

async function killAndRestart(
  world: ChaosWorld,
  random: () => number,
  note: (msg: string) => void,
  killed: Record<string, number>,
  how: { when?: string; target?: string } = {},
): Promise<void> {
  try {
    const victim = await world.killWorker(random, how.target);
    const name = victim.split(' ')[0]!;
    killed[name] = (killed[name] ?? 0) + 1;
    note(`${victim} SIGKILLed${how.when ? ` ${how.when}` : ''}`);
    await sleep(200 + random() * 1_300);
    await world.ensureWorkers();
  } catch (err) {
    note(`kill or restart failed: ${(err as Error).message.split('\n')[0]}`);
  }
}

/** Most jobs can complete; every fourth has a wallet too small for the draft, so it escalates
 * and (nobody deciding) ends `escalated` after a short decision timeout. */
function chaosRequest(jobId: string, i: number): JobRequest {
  const request = { ...sampleJobRequest(jobId), decision_timeout: '3s', traceparent: newTraceparent() };
  return i % 4 === 3 ? { ...request, budget: { usd: 0.005, revisions: 1 } } : request;
}

/** Kills at random moments in the window, one server restart between them and, with `databaseRestart`,
 * one database restart anywhere in the window, in time order. The database's draw comes last, so
 * a seed gives the dev server the same kills and restart as before there was one. With several
 * restarts of a kind (the soak), the window after its first tenth is cut into as many slices and
 * each restart falls at a random moment of its own slice, so they spread over the run. */
export function chaosSchedule(
  opts: Pick<ChaosOptions, 'kills' | 'windowMs' | 'serverRestarts' | 'databaseRestarts'>,
  random: () => number,
  databaseRestart: boolean,
): ChaosEvent[] {
  const events: ChaosEvent[] = Array.from({ length: opts.kills }, () => ({
    at: opts.windowMs * (0.1 + 0.9 * random()),
    kind: 'kill' as const,
  }));
  const spread = (n: number, kind: ChaosEvent['kind']) => {
    for (let k = 0; k < n; k++) events.push({ at: opts.windowMs * (0.1 + (0.9 * (k + random())) / n), kind });
  };
  const servers = opts.serverRestarts ?? 1;
  if (servers === 1) events.push({ at: opts.windowMs * (0.3 + 0.4 * random()), kind: 'server-restart' });
  else spread(servers, 'server-restart');
  const databases = databaseRestart ? (opts.databaseRestarts ?? 1) : 0;
  if (databases === 1) events.push({ at: opts.windowMs * (0.1 + 0.9 * random()), kind: 'database-restart' });
  else spread(databases, 'database-restart');
  return events.sort((a, b) => a.at - b.at);
}

/** Starts each job at its slot in the window, retrying while the server is down; a start that
 * reached the server before an error attaches to the existing job (startJob's id policy). */
async function startStaggered(
  client: Client,
  requests: JobRequest[],
  taskQueue: string,
  windowMs: number,
  note: (m: string) => void,
): Promise<void> {
  const t0 = Date.now();
  await Promise.all(
    requests.map(async (request, i) => {
      await sleep(Math.max(0, t0 + (windowMs * i) / requests.length - Date.now()));
      for (let attempt = 1; ; attempt++) {
        try {
          await startJob(client, request, { taskQueue, pipelines: BUILT_IN_PIPELINES });
          return;
        } catch (err) {
          if (attempt === 30) throw err;
          if (attempt === 1)
            note(`start of ${request.job_id} failed (${(err as Error).message.split('\n')[0]}); retrying`);
          await sleep(1_000);
        }
      }
    }),
  );
}

/** Waits until every job's workflow closed or the deadline passed; returns the ones still open. */
async function waitForEnd(
  client: Client,
  requests: JobRequest[],
  deadline: number,
  ensureWorkers: () => Promise<void>,
  closed: (n: number) => void,
): Promise<string[]> {
  let open = requests.map((r) => r.job_id);
  while (open.length > 0 && Date.now() < deadline) {
    closed(requests.length - open.length);
    await ensureWorkers();
    const running = await Promise.all(
      open.map((id) =>
        client.workflow
          .getHandle(id)
          .describe()
          .then((d) => d.status.name === 'RUNNING')
          .catch(() => true),
      ),
    );
    open = open.filter((_, i) => running[i]);
    // One describe per open job a round: many open jobs, fewer rounds.
    if (open.length > 0) await sleep(Math.min(5_000, 500 + 20 * open.length));
  }
  return open;
}

/** How the jobs ended and the checks on them; the CRM checks leave out the jobs that `pay` (their
 * writers paid a payments API, not the CRM). */
async function outcome(
  client: Client,
  crm: CrmStore,
  requests: JobRequest[],
  open: string[],
  pay: ReadonlySet<string>,
) {
  const ids = requests.map((r) => r.job_id);
  const crmIds = ids.filter((id) => !pay.has(id));
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

  // Every job's: a paying job's writer never writes the CRM.
  const writes = new Map(await Promise.all(ids.map(async (id) => [id, await crm.listWrites(id)] as const)));
  const completed = [...results.values()].filter((r) => r.status === 'completed' && !pay.has(r.job_id));
  const histories = await fetchHistories(client, closed);
  const events = eventTypeCounts(histories);
  const retried = histories
    .flatMap((h) => h.events ?? [])
    .filter((e) => (e.activityTaskStartedEventAttributes?.attempt ?? 1) > 1);
  const heartbeatTimeouts = retried.filter(
    (e) =>
      decodeTimeoutType(e.activityTaskStartedEventAttributes?.lastFailure?.timeoutFailureInfo?.timeoutType) ===
      'HEARTBEAT',
  ).length;
  const totalWrites = [...writes.values()].reduce((n, w) => n + w.length, 0);

  const check = (name: string, offenders: string[]): PropertyCheck => ({
    name,
    ok: offenders.length === 0,
    detail: offenders.length === 0 ? 'none off' : offenders.slice(0, 5).join('; '),
  });
  const crmChecks = [
    check(
      `every completed job (${completed.length}) wrote the CRM exactly once, and its receipt is that write`,
      completed
        .filter(
          (r) => writes.get(r.job_id)?.length !== 1 || writes.get(r.job_id)![0]!.write_key !== r.receipt?.write_key,
        )
        .map((r) => `${r.job_id}: ${writes.get(r.job_id)?.length ?? 0} writes`),
    ),
    check(
      `no duplicate or stray writes (${totalWrites} writes for ${completed.length} completed jobs)`,
      ids
        .filter((id) => (pay.has(id) || results.get(id)?.status !== 'completed') && (writes.get(id)?.length ?? 0) > 0)
        .map((id) => `${id} (${results.get(id)?.status ?? 'open'}): ${writes.get(id)!.length} writes`),
    ),
  ];
  return {
    endings,
    activity_retries: retried.length,
    heartbeat_timeouts: heartbeatTimeouts,
    workflow_task_timeouts: events.WorkflowTaskTimedOut ?? 0,
    checks: [
      check(
        `every job (${ids.length}) ended completed, escalated or rejected: none lost, none stuck`,
        ids
          .filter((id) => !ENDINGS.has(results.get(id)?.status ?? ''))
          .map(
            (id) =>
              `${id}: ${stuck.has(id) ? `still running, ${stuck.get(id)}` : (results.get(id)?.status ?? 'no result')}`,
          ),
      ),
      ...(crmIds.length > 0 ? crmChecks : []),
    ],
    results,
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
