/**
 * Hub vs serial relay: the same four stages — `start`, the specialists `spec-a` and
 * `spec-b` (each works SPECIALIST_MS), `finish` — once with the specialists fanned out at once and
 * merged by the rail (shape `hub`), once one after the other (shape `relay`). Jobs run one at a
 * time, alternating shapes, on an in-process worker, after an untimed warm-up job of each. The
 * relay is the baseline of the same run: the hub aims at the relay less one specialist's work,
 * max(branches) + merge. Every check is structural (status, acks, reservations, the branches'
 * overlap in history); no figure is asserted.
 */
import { HandrailPlugin } from '../../src/plugin';
import fs from 'node:fs';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { NativeConnection, type Worker } from '@temporalio/worker';
import { MERGE_STAGE, type AckRecord, type JobResult } from '../../contracts';
import { startJob } from '../../src/operator/client';
import { sampleJobRequest } from '../../src/devtools/samples/tickets';
import { openStore } from '../../src/worker/store';
import { createHandrailWorkers, runWorkers } from '../../src/worker/worker';
import { activitiesScheduled, branchesOverlapped, eventTypeCounts, fetchHistories, type History } from '../history';
import { NAMESPACE, newTraceparent, runId, type Lab } from '../lab';
import { fmt, markdownTable, percentile } from '../report';
import { hubActivities, shapeLine, SPECIALIST_MS } from './activities';
import { hubBench, WORST_CASE_USD, type Shape } from './pipeline';
import { bundleRail } from '../../src/worker/bundle';

export interface HubJob {
  job_id: string;
  shape: Shape;
  latency_ms: number;
  history_events: number;
  /** Activity types the job's workflow scheduled, in order. */
  activities: string[];
  /** `stage:ack` of every ack, oldest first. */
  acks: string[];
  /** Hub only: both specialists were scheduled before either completed. */
  branches_overlapped?: boolean;
}

export interface ShapeFigures {
  p50_latency_ms: number;
  min_latency_ms: number;
  max_latency_ms: number;
  history_events_per_job: number;
  activities_per_job: number;
}

export interface HubFigures {
  jobs_per_shape: number;
  specialist_ms: number;
  schedule: string;
  hub: ShapeFigures;
  relay: ShapeFigures;
  /** p50 hub / p50 relay. */
  hub_over_relay: number;
  /** The target: p50 relay less one specialist's work, max(branches) + merge. */
  ideal_ms: number;
  ideal_over_relay: number;
  /** p50 hub less the ideal: what running the branches at once costs beyond the overlap. */
  hub_less_ideal_ms: number;
  /** Mean events per job, hub less relay, by type (types that differ). */
  extra_hub_events_by_type: Record<string, number>;
  jobs: HubJob[];
}

const EXPECTED_ACKS: Record<Shape, string[]> = {
  hub: ['start:accepted', 'spec-a:accepted', 'spec-b:accepted', 'merge:accepted', 'finish:accepted'],
  relay: ['start:accepted', 'spec-a:accepted', 'spec-b:accepted', 'finish:accepted'],
};

/** Runs `jobs` jobs of each shape (default 5) and reads their histories. */
export async function hubVsRelay(lab: Pick<Lab, 'address' | 'tmp' | 'client'>, jobs = 5): Promise<HubFigures> {
  const { code } = await bundleRail(path.join(__dirname, 'workflows.ts'));
  const connection = await NativeConnection.connect({ address: lab.address });
  const store = await openStore({ dataDir: fs.mkdtempSync(path.join(lab.tmp, 'hub-')), databaseUrl: undefined });
  const taskQueue = `bench-hub-${runId()}`;
  let workers: Worker[] = [];
  let running: Promise<void> | undefined;
  try {
    workers = await createHandrailWorkers({
      connection,
      plugin: new HandrailPlugin({ pipelines: [hubBench], activities: hubActivities }),
      config: { namespace: NAMESPACE, taskQueue },
      store,
      workflowBundle: { code },
    });
    running = runWorkers(workers);
    const id = runId();
    for (const shape of ['hub', 'relay'] as const)
      await runJob(lab.client, taskQueue, `hub-${id}-warmup-${shape}`, shape);
    const timed: { job_id: string; shape: Shape; latency_ms: number; result: JobResult }[] = [];
    for (let round = 0; round < jobs; round++) {
      // Alternating who goes first spreads drift in the machine's load over both shapes.
      for (const shape of round % 2 === 0 ? (['hub', 'relay'] as const) : (['relay', 'hub'] as const)) {
        const jobId = `hub-${id}-${shape}-${round}`;
        timed.push({ job_id: jobId, shape, ...(await runJob(lab.client, taskQueue, jobId, shape)) });
      }
    }
    const histories = await fetchHistories(
      lab.client,
      timed.map((t) => t.job_id),
    );
    const measured = timed.map((t, i): HubJob => ({
      job_id: t.job_id,
      shape: t.shape,
      latency_ms: t.latency_ms,
      history_events: histories[i]!.events?.length ?? 0,
      activities: activitiesScheduled(histories[i]!),
      acks: t.result.acks.map((a) => `${a.stage}:${a.ack}`),
      ...(t.shape === 'hub' ? { branches_overlapped: branchesOverlapped(histories[i]!, 'spec-a', 'spec-b') } : {}),
    }));
    const problems = timed.flatMap((t, i) => jobProblems(t.result, measured[i]!));
    if (problems.length > 0)
      throw new Error(`hub bench: ${problems.length} check(s) failed:\n- ${problems.join('\n- ')}`);
    return figures(jobs, measured, histories);
  } finally {
    for (const w of workers) w.shutdown();
    await running;
    await store.close();
    await connection.close();
  }
}

async function runJob(
  client: Client,
  taskQueue: string,
  jobId: string,
  shape: Shape,
): Promise<{ latency_ms: number; result: JobResult }> {
  const request = {
    ...sampleJobRequest(jobId),
    pipeline: hubBench.name,
    ticket: { id: 'tkt_hub_bench', customer_id: 'cus_9', subject: 'Ask two specialists', body: shapeLine(shape) },
    traceparent: newTraceparent(),
  };
  const started = Date.now();
  const { handle } = await startJob(client, request, { taskQueue });
  const result: JobResult = await handle.result();
  const latency = Date.now() - started;
  if (result.status !== 'completed') throw new Error(`${jobId} ended ${result.status}: ${result.reason ?? ''}`);
  return { latency_ms: latency, result };
}

/** What a job must show: its shape's acks in order, each stage hop's reservation made and settled
 * at the stage's report ($0), and, for the hub, its branches at work at once. */
function jobProblems(result: JobResult, job: HubJob): string[] {
  const problems: string[] = [];
  const at = `${job.job_id} (${job.shape})`;
  if (job.acks.join(' ') !== EXPECTED_ACKS[job.shape].join(' '))
    problems.push(`${at}: acks ${job.acks.join(', ')}; expected ${EXPECTED_ACKS[job.shape].join(', ')}`);
  const stageAcks = result.acks.filter((a: AckRecord) => a.stage !== MERGE_STAGE);
  const unreserved = stageAcks.filter((a) => a.reserved_usd !== WORST_CASE_USD || a.settled_usd !== 0);
  if (unreserved.length > 0)
    problems.push(
      `${at}: hops not reserved at $${WORST_CASE_USD} and settled at $0: ${unreserved.map((a) => `${a.stage} ${a.reserved_usd} → ${a.settled_usd}`).join(', ')}`,
    );
  if (job.shape === 'hub' && !job.branches_overlapped)
    problems.push(`${at}: spec-a and spec-b did not both start before either completed`);
  if (job.shape === 'hub' && job.activities.filter((n) => n === 'mergeBranches').length !== 1)
    problems.push(`${at}: mergeBranches ran ${job.activities.filter((n) => n === 'mergeBranches').length} times`);
  return problems;
}

function shapeFigures(jobs: readonly HubJob[]): ShapeFigures {
  const latencies = jobs.map((j) => j.latency_ms);
  return {
    p50_latency_ms: percentile(latencies, 50),
    min_latency_ms: Math.min(...latencies),
    max_latency_ms: Math.max(...latencies),
    history_events_per_job: jobs.reduce((n, j) => n + j.history_events, 0) / jobs.length,
    activities_per_job: jobs.reduce((n, j) => n + j.activities.length, 0) / jobs.length,
  };
}

function figures(perShape: number, jobs: HubJob[], histories: readonly History[]): HubFigures {
  const of = (shape: Shape) => jobs.filter((j) => j.shape === shape);
  const hub = shapeFigures(of('hub'));
  const relay = shapeFigures(of('relay'));
  const events = (shape: Shape) => {
    const counts = eventTypeCounts(histories.filter((_, i) => jobs[i]!.shape === shape));
    for (const type of Object.keys(counts)) counts[type]! /= of(shape).length;
    return counts;
  };
  const [h, r] = [events('hub'), events('relay')];
  const extra = Object.fromEntries(
    [...new Set([...Object.keys(h), ...Object.keys(r)])]
      .map((type) => [type, (h[type] ?? 0) - (r[type] ?? 0)] as const)
      .filter(([, d]) => d !== 0)
      .sort((x, y) => y[1] - x[1]),
  );
  const ideal = relay.p50_latency_ms - SPECIALIST_MS;
  return {
    jobs_per_shape: perShape,
    specialist_ms: SPECIALIST_MS,
    schedule:
      'one job at a time, shapes alternating (which goes first alternates per round), after an untimed warm-up job of each',
    hub,
    relay,
    hub_over_relay: hub.p50_latency_ms / relay.p50_latency_ms,
    ideal_ms: ideal,
    ideal_over_relay: ideal / relay.p50_latency_ms,
    hub_less_ideal_ms: hub.p50_latency_ms - ideal,
    extra_hub_events_by_type: extra,
    jobs,
  };
}

export function hubMarkdown(f: HubFigures): string {
  const signed = (x: number) => `${x > 0 ? '+' : ''}${fmt(x)}`;
  return [
    `## Hub vs serial relay (start → spec-a, spec-b → finish; each specialist works ${f.specialist_ms} ms; ${f.jobs_per_shape} jobs per shape, one at a time, alternating)\n`,
    markdownTable(
      ['shape', 'p50 job latency (ms)', 'min (ms)', 'max (ms)', 'history events / job', 'activities / job'],
      [
        [
          'hub (fan-out, merge)',
          fmt(f.hub.p50_latency_ms),
          fmt(f.hub.min_latency_ms),
          fmt(f.hub.max_latency_ms),
          fmt(f.hub.history_events_per_job),
          fmt(f.hub.activities_per_job),
        ],
        [
          'relay (spec-a then spec-b)',
          fmt(f.relay.p50_latency_ms),
          fmt(f.relay.min_latency_ms),
          fmt(f.relay.max_latency_ms),
          fmt(f.relay.history_events_per_job),
          fmt(f.relay.activities_per_job),
        ],
      ],
    ),
    '',
    `hub / relay (p50): ${f.hub_over_relay.toFixed(2)}×`,
    `ideal, max(branches) + merge (relay p50 less one specialist's ${f.specialist_ms} ms): ${fmt(f.ideal_ms)} ms = ${f.ideal_over_relay.toFixed(2)}× relay; hub less ideal: ${signed(f.hub_less_ideal_ms)} ms`,
    `extra hub events per job: ${
      Object.entries(f.extra_hub_events_by_type)
        .map(([type, d]) => `${type} ${signed(d)}`)
        .join(', ') || 'none'
    }`,
  ].join('\n');
}
