/**
 * `handrail eval`'s I/O: recorded histories scored as recorded (and, with `replay`, walked
 * through the current code), and fresh jobs started through the build's pipelines on a worker of
 * this process, on a dev server started for the run or the server at `address`. Every job is
 * scored from its history, so a fresh job and a recorded one score alike.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import type { History } from '@temporalio/common/lib/proto-utils';
import { NativeConnection } from '@temporalio/worker';
import { HandrailPlugin } from '../plugin';
import type { ActivityDeps } from '../../activities/deps';
import type { StageActivity } from '../../activities/stage';
import { fetchJobHistory, startJob } from '../operator/client';
import { bundleRail } from '../worker/bundle';
import { openStore } from '../worker/store';
import { createHandrailWorkers, runWorkers } from '../worker/worker';
import { ensureDevServer, freePort } from '../devtools/devserver/server';
import { diffRecorded, quietReplayRuntime, recordedJob, type ReplaySource } from '../replay';
import { buildInfo, type EvalBuild } from './build';
import type { FreshCase } from './dataset';
import { evalJobFromHistory } from './job';
import { scoreJob } from './scorers';
import { summarize } from './stats';
import type { EvalJob, EvalRun, ScoredJob, Scorer } from './types';

export interface EvalOptions {
  build: EvalBuild;
  /** Recorded jobs: history files, or runs a visibility query matched. */
  histories: Iterable<ReplaySource> | AsyncIterable<ReplaySource>;
  /** Jobs to start fresh. */
  fresh: readonly FreshCase[];
  scorers: readonly Scorer[];
  /** Walk each recorded job through the current code too (`replay --diff`). */
  replay?: boolean;
  /** How many fresh jobs run at once (default DEFAULT_CONCURRENCY). */
  concurrency?: number;
  /** The Temporal server fresh jobs run on; a dev server is started for the run when absent. */
  server?: { address: string; namespace: string };
  /** What the dataset came from, as the results record it. */
  sources: string[];
  log?: (line: string) => void;
  /**
   * Runs after the fresh jobs' workers are made, with the pipelines the jobs name: an offline model
   * the stages of some of them read from the environment, say. The pipelines it names in `own` get
   * workers of their own, made after it ran (and so seeing what it set); `close` runs after the jobs.
   */
  prepare?: (pipelines: readonly string[]) => Promise<{ own: readonly string[]; close(): Promise<void> }>;
}

export class EvalSetupError extends Error {
  override readonly name = 'EvalSetupError';
}

/** How many fresh jobs run at once unless told otherwise. */
export const DEFAULT_CONCURRENCY = 16;
/** How many histories are fetched at once after the fresh jobs end. */
const FETCH_CONCURRENCY = 8;

async function mapLimited<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const lane = async () => {
    for (let i = next++; i < items.length; i = next++) out[i] = await fn(items[i]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  return out;
}

/** Recorded jobs, decoded (another workflow's history is skipped) and, with `replay`, diffed. */
async function recordedJobs(opts: EvalOptions): Promise<EvalJob[]> {
  const jobs: EvalJob[] = [];
  for await (const source of opts.histories) {
    // Read once: scored, and with `replay` diffed, from the same decoded job.
    const recorded = recordedJob(source.workflowId, source.history);
    const job = evalJobFromHistory(
      source.workflowId,
      source.history,
      opts.build.pipelines,
      { case: source.workflowId, source: 'recorded' },
      recorded,
    );
    if (!job || !recorded) {
      opts.log?.(`${source.name}: not a handoffJob history, not scored`);
      continue;
    }
    if (opts.replay) {
      const diff = await diffRecorded(source.name, recorded, opts.build);
      job.replay = { ...(diff.first ? { moved: diff.first } : {}), notes: diff.notes };
    }
    jobs.push(job);
  }
  return jobs;
}

/** A run's own prefix for its job ids: fresh jobs never collide with earlier runs on the same server. */
const runPrefix = () => `eval-${Date.now().toString(36)}-${process.pid}`;

/** Fresh jobs through the build, on a worker of this process: started together, scored from their histories. */
async function freshJobs(opts: EvalOptions): Promise<EvalJob[]> {
  if (opts.fresh.length === 0) return [];
  const { build } = opts;
  if (!build.workflowsPath)
    throw new EvalSetupError(
      `fresh runs need the build's workflow module: ${build.module ?? 'the module'} must export workflowsPath`,
    );
  quietReplayRuntime();
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'handrail-eval-'));
  const cleanups: (() => Promise<unknown>)[] = [async () => fs.rmSync(tmp, { recursive: true, force: true })];
  try {
    let server = opts.server;
    if (!server) {
      const dev = await ensureDevServer({
        port: await freePort(),
        uiPort: await freePort(),
        logFile: path.join(tmp, 'temporal-server.log'),
        log: (m) => opts.log?.(m),
      });
      cleanups.unshift(() => dev.stop());
      server = { address: dev.address, namespace: 'default' };
      opts.log?.(`started a dev server for the run at ${dev.address}`);
    }
    const store = await openStore({ dataDir: tmp });
    cleanups.unshift(() => store.close());
    const native = await NativeConnection.connect({ address: server.address });
    cleanups.unshift(() => native.close());
    const connection = await Connection.connect({ address: server.address });
    cleanups.unshift(() => connection.close());
    const plugin = new HandrailPlugin({
      pipelines: build.pipelines,
      activities: build.activities as (deps: ActivityDeps) => Record<string, StageActivity>,
      workflowsPath: build.workflowsPath,
      preloadModules: build.preloadModules ?? [],
    });
    const prefix = runPrefix();
    const workflowBundle = await bundleRail(build.workflowsPath, undefined, build.preloadModules ?? []);
    const startWorkers = async (taskQueue: string) => {
      const workers = await createHandrailWorkers({
        connection: native,
        plugin,
        config: { namespace: server.namespace, taskQueue },
        store,
        workflowBundle,
      });
      const running = runWorkers(workers);
      cleanups.unshift(async () => {
        for (const w of workers) w.shutdown();
        await running;
      });
    };
    await startWorkers(prefix);
    const named = [...new Set(opts.fresh.map((c) => String(c.request.pipeline ?? build.pipelines[0]!.name)))];
    const prepared = await opts.prepare?.(named);
    if (prepared) cleanups.unshift(() => prepared.close());
    const own = new Set(prepared?.own ?? []);
    if (own.size > 0) await startWorkers(`${prefix}-own`);
    const client = new Client({ connection, namespace: server.namespace, plugins: [plugin] });
    opts.log?.(`starting ${opts.fresh.length} fresh jobs on ${server.address} (task queue ${prefix})`);
    // A bounded number in flight: a job's latency is its own, and no stage times out because
    // hundreds of others share two cores with it.
    const ended = await mapLimited(opts.fresh, opts.concurrency ?? DEFAULT_CONCURRENCY, async (c) => {
      const jobId = `${prefix}-${c.case}`;
      const taskQueue = own.has(String(c.request.pipeline ?? build.pipelines[0]!.name)) ? `${prefix}-own` : prefix;
      const { handle } = await startJob(client, { ...c.request, job_id: jobId }, { taskQueue });
      // A job that fails outside the rail still has a history to score (its status reads `running`).
      await handle.result().catch(() => undefined);
      return { c, jobId };
    });
    return await mapLimited(ended, FETCH_CONCURRENCY, async ({ c, jobId }) => {
      const history: History = await fetchJobHistory(client, jobId);
      const job = evalJobFromHistory(jobId, history, build.pipelines, {
        case: c.case,
        source: 'fresh',
        ...(c.expect ? { expect: c.expect } : {}),
      });
      if (!job) throw new EvalSetupError(`${jobId}: its history is not a handoffJob's`);
      return job;
    });
  } finally {
    for (const cleanup of cleanups) await cleanup().catch(() => undefined);
  }
}

async function scored(job: EvalJob, scorers: readonly Scorer[]): Promise<ScoredJob> {
  return {
    case: job.case,
    job_id: job.job_id,
    source: job.source,
    pipeline: job.pipeline,
    status: job.status,
    ...(job.result?.reason ? { reason: job.result.reason } : {}),
    path: job.path,
    scores: await scoreJob(job, scorers),
    ...(job.replay ? { replay: job.replay } : {}),
  };
}

/** Runs the eval and returns its results, with the build that produced them. */
export async function runEval(opts: EvalOptions): Promise<EvalRun> {
  const startedAt = new Date();
  const t0 = performance.now();
  const recorded = await recordedJobs(opts);
  const fresh = await freshJobs(opts);
  const jobs: ScoredJob[] = [];
  for (const job of [...recorded, ...fresh]) jobs.push(await scored(job, opts.scorers));
  return {
    format: 'handrail.eval.v1',
    build: buildInfo(opts.build),
    started_at: startedAt.toISOString(),
    duration_ms: Math.round(performance.now() - t0),
    dataset: { histories: recorded.length, fresh: fresh.length, sources: opts.sources },
    scorers: opts.scorers.map(({ name, description, unit }) => ({ name, description, unit })),
    summary: summarize(jobs, opts.scorers),
    jobs,
  };
}
