/**
 * The load shape through `stageHop`: packages replayed through one stage (writeback, the
 * one that writes), some invalid, some delivered twice. Checks that invalid packages are refused
 * before any work, valid ones written once, second deliveries answered as duplicates, and the
 * traceparent kept on every ack, and measures deliveries per second. Used by `npm run load` and, at small N, by the suite.
 */
import type { Client } from '@temporalio/client';
import { isDeepStrictEqual } from 'node:util';
import type { HandoffV1 } from '../contracts';
import { sampleJobRequest } from '../src/devtools/samples/tickets';
import type { Store } from '../src/worker/store';
import { firstPackage } from '../workflows/rail/first-package';
import type { StageHopRequest, StageHopResult } from '../workflows/stage-hop';
import { fetchHistories, stageActivitiesScheduled } from './history';
import { newTraceparent } from './lab';
import { ticketTriage } from '../contracts/pipelines/ticket-triage';

export interface LoadShapeOptions {
  client: Client;
  taskQueue: string;
  /** The worker's store, to count CRM writes. */
  store: Store;
  /** Distinct packages; every 10th is invalid, every 20th valid one is delivered twice. */
  packages: number;
  /** Distinct sample tickets the jobs' real relays to judge start from (writeback acts only on a
   * chain recorded for its own job, so every package is relayed, none cloned). */
  templates: number;
  /** Deliveries in flight at once. */
  concurrency: number;
  /** Prefix for job and workflow ids, unique per run. */
  prefix: string;
  /** Told how far the run is, as a line (the bench shows it live on a terminal). */
  onProgress?: (text: string) => void;
}

export interface PropertyCheck {
  name: string;
  ok: boolean;
  /** What was counted, and the first offenders when it failed. */
  detail: string;
}

export interface LoadShapeReport {
  stage: 'writeback';
  packages: number;
  invalid: number;
  duplicated: number;
  deliveries: number;
  seconds: number;
  deliveries_per_second: number;
  acks: Record<string, number>;
  checks: PropertyCheck[];
  /** Workflow ids of the first deliveries acked `accepted`, to read what one cost. */
  accepted_workflow_ids: string[];
}

const STAGE = 'writeback';
export const RELAY = ['intake', 'retrieve', 'draft', 'judge'] as const;
/** Required fields an invalid package lacks, in turn; the trace stays, so every ack can be checked against it. */
const DROPPED_FIELDS = ['job_id', 'goal', 'budget', 'evaluator', 'tools_tried', 'memory_refs'] as const;

type Kind = 'valid' | 'invalid' | 'again';
interface Delivery {
  kind: Kind;
  jobId: string;
  workflowId: string;
  sent: Record<string, unknown>;
  traceparent: string;
  result?: StageHopResult;
}

/** One side of `npm run load`, relayed and ready: its deliveries go out in rounds (so the bench can
 * alternate the sides on one server), and the report counts every round. */
export interface TimedLoad<Report> {
  /** Delivers the `round`th of `rounds` contiguous slices of the packages, timed. */
  deliverRound(round: number, rounds: number): Promise<void>;
  finish(): Promise<Report>;
}

export async function runLoadShape(opts: LoadShapeOptions): Promise<LoadShapeReport> {
  const load = await prepareLoadShape(opts);
  await load.deliverRound(0, 1);
  return load.finish();
}

/** Relays every package to the judge (untimed) and builds the deliveries. */
export async function prepareLoadShape(opts: LoadShapeOptions): Promise<TimedLoad<LoadShapeReport>> {
  const judged = await judgedPackages(opts);
  const firsts: Delivery[] = [];
  for (let i = 0; i < opts.packages; i++) {
    const jobId = `${opts.prefix}-p${i}`;
    const pkg = judged.get(jobId)!;
    const traceparent = pkg.trace.traceparent;
    const invalid = i % 10 === 9;
    const sent: Record<string, unknown> = { ...pkg };
    if (invalid) delete sent[DROPPED_FIELDS[Math.floor(i / 10) % DROPPED_FIELDS.length]!];
    firsts.push({ kind: invalid ? 'invalid' : 'valid', jobId, workflowId: `${opts.prefix}-d${i}`, sent, traceparent });
  }
  const agains = firsts
    .filter((_, i) => i % 20 === 0)
    .map((d): Delivery => ({ ...d, kind: 'again', workflowId: `${d.workflowId}-again` }));

  const total = firsts.length + agains.length;
  let delivered = 0;
  let seconds = 0;
  const answered = () => opts.onProgress?.(`… ${++delivered} of ${total} deliveries answered`);
  return {
    async deliverRound(round, rounds) {
      const started = Date.now();
      // A second delivery goes out once its first has answered: that is when `duplicate` is the
      // promised ack (two racing deliveries are both accepted and still write once).
      await inParallel(roundOf(firsts, round, rounds), opts.concurrency, async (d) => {
        d.result = await deliver(opts, d);
        answered();
        const again = agains.find((a) => a.jobId === d.jobId);
        if (again) {
          again.result = await deliver(opts, again);
          answered();
        }
      });
      seconds += (Date.now() - started) / 1000;
    },
    async finish() {
      const all = [...firsts, ...agains];
      const acks: Record<string, number> = {};
      for (const d of all) acks[d.result!.ack.ack] = (acks[d.result!.ack.ack] ?? 0) + 1;
      return {
        stage: STAGE,
        packages: firsts.length,
        invalid: firsts.filter((d) => d.kind === 'invalid').length,
        duplicated: agains.length,
        deliveries: all.length,
        seconds,
        deliveries_per_second: all.length / seconds,
        acks,
        checks: await checkProperties(opts, firsts, agains),
        accepted_workflow_ids: firsts.filter((d) => d.result!.ack.ack === 'accepted').map((d) => d.workflowId),
      };
    },
  };
}

/** The `round`th of `rounds` contiguous slices: each holds its share of invalid and repeated packages. */
export function roundOf<T>(items: readonly T[], round: number, rounds: number): readonly T[] {
  return items.slice(Math.floor((round * items.length) / rounds), Math.floor(((round + 1) * items.length) / rounds));
}

async function checkProperties(
  opts: LoadShapeOptions,
  firsts: Delivery[],
  agains: Delivery[],
): Promise<PropertyCheck[]> {
  const invalid = firsts.filter((d) => d.kind === 'invalid');
  const valid = firsts.filter((d) => d.kind === 'valid');
  const writes = new Map<string, number>();
  for (const d of firsts) writes.set(d.jobId, (await opts.store.listWrites(d.jobId)).length);
  const invalidHistories = await fetchHistories(
    opts.client,
    invalid.map((d) => d.workflowId),
  );
  const againHistories = await fetchHistories(
    opts.client,
    agains.map((d) => d.workflowId),
  );
  const firstOf = (jobId: string) => firsts.find((d) => d.jobId === jobId)!;

  return [
    check(
      `every invalid package (${invalid.length}) is acked rejected_schema`,
      invalid,
      (d) => d.result!.ack.ack === 'rejected_schema',
      (d) => `${d.workflowId}: ${d.result!.ack.ack}`,
    ),
    check(
      `no stage activity ran and nothing was written for an invalid package`,
      invalid.map((d, i) => ({ d, ran: stageActivitiesScheduled(invalidHistories[i]!) })),
      ({ d, ran }) => ran.length === 0 && writes.get(d.jobId) === 0,
      ({ d, ran }) => `${d.workflowId}: ran [${ran.join(', ')}], ${writes.get(d.jobId)} writes`,
    ),
    check(
      `every valid package (${valid.length}) is accepted and written exactly once`,
      valid,
      (d) => d.result!.ack.ack === 'accepted' && writes.get(d.jobId) === 1,
      (d) => `${d.workflowId}: ${d.result!.ack.ack}, ${writes.get(d.jobId)} writes`,
    ),
    check(
      `every second delivery (${agains.length}) is acked duplicate with the first receipt, answered by the rail's own lookup before any stage work, costs nothing, adds no write`,
      agains.map((d, i) => ({ d, ran: stageActivitiesScheduled(againHistories[i]!) })),
      ({ d, ran }) =>
        d.result!.ack.ack === 'duplicate' &&
        isDeepStrictEqual(d.result!.artifact, firstOf(d.jobId).result!.artifact) &&
        ran.length === 0 &&
        d.result!.cost_usd === 0 &&
        writes.get(d.jobId) === 1,
      ({ d, ran }) => `${d.workflowId}: ${d.result!.ack.ack}, ran [${ran.join(', ')}], ${writes.get(d.jobId)} writes`,
    ),
    check(
      `the traceparent on every ack (${firsts.length + agains.length}), refused ones included, equals the one delivered, and the one the stage emitted`,
      [...firsts, ...agains],
      (d) =>
        d.result!.ack.traceparent === d.traceparent &&
        (d.result!.package === undefined || d.result!.package.trace.traceparent === d.traceparent),
      (d) => `${d.workflowId}: ack ${d.result!.ack.traceparent}, sent ${d.traceparent}`,
    ),
  ];
}

function check<T>(
  name: string,
  items: readonly T[],
  holds: (item: T) => boolean,
  describe: (item: T) => string,
): PropertyCheck {
  const offenders = items.filter((item) => !holds(item));
  return {
    name,
    ok: offenders.length === 0,
    detail:
      offenders.length === 0
        ? `${items.length} of ${items.length}`
        : `${offenders.length} of ${items.length} fail, e.g. ${offenders.slice(0, 3).map(describe).join('; ')}`,
  };
}

function deliver(opts: LoadShapeOptions, d: Delivery): Promise<StageHopResult> {
  return opts.client.workflow.execute<(r: StageHopRequest) => Promise<StageHopResult>>('stageHop', {
    taskQueue: opts.taskQueue,
    workflowId: d.workflowId,
    args: [{ stage: STAGE, package: d.sent, delivery_id: d.workflowId }],
  });
}

/** One package per job that passed the judge, made by really relaying a sample ticket through
 * the stages under that job's id (not timed: the load is the writeback deliveries). */
async function judgedPackages(opts: LoadShapeOptions): Promise<Map<string, HandoffV1>> {
  const made = new Map<string, HandoffV1>();
  await inParallel([...Array(opts.packages).keys()], opts.concurrency, async (i) => {
    const t = i % opts.templates;
    let pkg = loadShapeFirstPackage(opts, i);
    for (const stage of RELAY) {
      const res = await opts.client.workflow.execute<(r: StageHopRequest) => Promise<StageHopResult>>('stageHop', {
        taskQueue: opts.taskQueue,
        workflowId: `${pkg.job_id}-${stage}`,
        args: [{ stage, package: pkg }],
      });
      if (res.ack.ack !== 'accepted' || !res.package)
        throw new Error(`template ${t}: ${stage} answered ${res.ack.ack} (${res.failure ?? res.ack.reason})`);
      pkg = res.package;
    }
    if (pkg.evaluator.last_verdict !== 'pass')
      throw new Error(`template ${t}: the judge said ${pkg.evaluator.last_verdict}, writeback would refuse`);
    made.set(pkg.job_id, pkg);
    opts.onProgress?.(`… ${made.size} of ${opts.packages} packages relayed to the judge`);
  });
  return made;
}

/** Package `i` of a run as it enters intake: job `<prefix>-p<i>` on one of the sample tickets. */
export function loadShapeFirstPackage(opts: Pick<LoadShapeOptions, 'prefix' | 'templates'>, i: number): HandoffV1 {
  const request = sampleJobRequest(`${opts.prefix}-p${i}`);
  return firstPackage(
    { ...request, ticket: { ...request.ticket, id: `tkt_load_${i % opts.templates}` } },
    newTraceparent(),
    ticketTriage,
  );
}

/** Runs `fn` over items with at most `limit` in flight; the first failure rejects. */
export async function inParallel<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) await fn(items[next++]!);
  });
  await Promise.all(lanes);
}
