/**
 * `handrail replay --diff`: a recorded job's packages run again through the current pipeline —
 * its routing table, the rail's ack and invariant decisions, and the stages' own code — and the
 * first hop where the ack, the route, an artifact's address or the cost differs from the
 * recording. The decisions are the rail's pure functions (workflows/rail), never copies; the
 * walk over a recording is pure too, with the stage runs handed in (`StageRunner`).
 */
import type { History } from '@temporalio/common/lib/proto-utils';
import { IllegalStateError, defaultPayloadConverter } from '@temporalio/common';
import type { temporal } from '@temporalio/proto';
import {
  HUMAN,
  MERGE_STAGE,
  canonicalJson,
  findPipeline,
  isTranscriptUri,
  movedByStage,
  reservationUsd,
  type AckRecord,
  type Hop,
  type JobRequest,
  type JobResult,
  type Pipeline,
  type StageResult,
  type StageWork,
} from '../../contracts';
import type { MergeWork } from '../../activities/merge';
import { admitHop, decideHop, stampAck, type HopOutcome, type HopRequest } from '../../workflows/rail/hop-decisions';
import { concludeHop } from '../../workflows/rail/conclude';
import { DEFAULT_MAX_HOPS, ORIGIN, chainLength, keptChain } from '../../workflows/rail/hop-chain';
import { firstPackage } from '../../workflows/rail/first-package';
import { route, type Route } from '../../workflows/rail/routing';

type Event = temporal.api.history.v1.IHistoryEvent;

/** One stage activity of the recording: what the rail delivered, and what the stage answered. */
export interface RecordedHop {
  kind: 'stage';
  work: StageWork;
  result?: StageResult;
  /** Why the activity failed, when it did. */
  failure?: string;
}

/** A fan-out's merge (the rail's own activity): not re-run, but the route goes on from it. */
export interface RecordedMerge {
  kind: 'merge';
  work: MergeWork;
  result?: StageResult;
}

export type RecordedStep = RecordedHop | RecordedMerge;

/** What a job's history says it did, decoded: the request, each stage's work, and the acks when it ended. */
export interface RecordedJob {
  workflowId: string;
  request: JobRequest;
  steps: RecordedStep[];
  /** The job's result: every ack, and how it ended. Absent while the job runs (or when it failed). */
  result?: Pick<JobResult, 'status' | 'acks'>;
}

/** One thing that differs at a hop: what the recording did, and what the current code does. */
export interface Difference {
  what: 'route' | 'ack' | 'artifact' | 'cost' | 'stage';
  recorded: string;
  now: string;
}

/** A job's diff: the first hop that differs (`first`), or none. No `pipeline`: nothing was compared
 * (another workflow's history, or a pipeline not given); `notes` say why, and what else was not compared. */
export interface JobDiff {
  history: string;
  workflowId: string;
  pipeline?: string;
  /** Stage hops compared. */
  hops: number;
  first?: { hop: number; stage: string; differences: Difference[] };
  notes: string[];
}

/** What a stage's current code answers for a recorded delivery: its result, or why it failed. */
export type StageRun = { result: StageResult } | { failure: string };
/** Runs one recorded delivery through the stage's current code (after the job's earlier steps). */
export type StageRunner = (step: RecordedHop, earlier: readonly RecordedStep[]) => Promise<StageRun>;

const decode = <T>(payloads: temporal.api.common.v1.IPayloads | null | undefined): T | undefined => {
  const first = payloads?.payloads?.[0];
  return first ? defaultPayloadConverter.fromPayload<T>(first as never) : undefined;
};

const isStageWork = (input: unknown): input is StageWork =>
  typeof input === 'object' &&
  input !== null &&
  typeof (input as StageWork).stage === 'string' &&
  typeof (input as StageWork).delivery_key === 'string' &&
  typeof (input as StageWork).package === 'object';

/**
 * A `handoffJob` history decoded: the request it started with, every stage activity and merge in
 * the order the rail scheduled them (an attempt that timed out before a worker took it is left
 * out: the rail tried again), and its result when it completed. Undefined for any other workflow.
 */
export function recordedJob(workflowId: string, history: History): RecordedJob | undefined {
  const events: Event[] = history.events ?? [];
  const started = events[0]?.workflowExecutionStartedEventAttributes;
  if (started?.workflowType?.name !== 'handoffJob') return undefined;
  const request = decode<JobRequest>(started.input);
  if (!request) return undefined;
  const ended = new Map<string, Event>();
  for (const e of events) {
    const scheduled =
      e.activityTaskCompletedEventAttributes ??
      e.activityTaskFailedEventAttributes ??
      e.activityTaskTimedOutEventAttributes ??
      e.activityTaskCanceledEventAttributes;
    if (scheduled?.scheduledEventId != null) ended.set(String(scheduled.scheduledEventId), e);
  }
  const steps: RecordedStep[] = [];
  for (const e of events) {
    const attrs = e.activityTaskScheduledEventAttributes;
    if (!attrs) continue;
    const end = ended.get(String(e.eventId));
    if (end?.activityTaskTimedOutEventAttributes || end?.activityTaskCanceledEventAttributes) continue;
    const input = decode<unknown>(attrs.input);
    const result = decode<StageResult>(end?.activityTaskCompletedEventAttributes?.result);
    const failed = end?.activityTaskFailedEventAttributes?.failure;
    if (attrs.activityType?.name === 'mergeBranches')
      steps.push({ kind: 'merge', work: input as MergeWork, ...(result ? { result } : {}) });
    else if (isStageWork(input) && attrs.activityType?.name === input.stage) {
      steps.push({
        kind: 'stage',
        work: input,
        ...(result ? { result } : {}),
        ...(failed ? { failure: failed.cause?.message ?? failed.message ?? 'failed' } : {}),
      });
    }
  }
  const completed = recordedResult(history);
  return {
    workflowId,
    request,
    steps,
    ...(completed ? { result: { status: completed.status, acks: completed.acks } } : {}),
  };
}

/** The job's result as its history's completion recorded it: undefined while it runs, or when it
 * failed or was terminated (no result), or for another workflow. */
export function recordedResult(history: History): JobResult | undefined {
  return decode<JobResult>(history.events?.at(-1)?.workflowExecutionCompletedEventAttributes?.result);
}

/** A route as the report names it: the stage, the fan-out's stages, `complete` or `escalate`. */
export function describeRoute(step: Route | undefined): string {
  if (!step) return 'escalate (the hop did not pass)';
  if (step.kind === 'hop') return step.to;
  if (step.kind === 'fanout') return step.rule.fanOut.join(' + ');
  return `${step.kind} (${step.reason})`;
}

/** The route's difference from the stage the recording delivered to next, or undefined. */
export function routeDifference(step: Route | undefined, recorded: string): Difference | undefined {
  const same =
    step?.kind === 'hop' ? step.to === recorded : step?.kind === 'fanout' ? step.rule.fanOut.includes(recorded) : false;
  return same ? undefined : { what: 'route', recorded, now: describeRoute(step) };
}

const ackText = (acks: readonly Pick<AckRecord, 'ack' | 'invariant'>[]) =>
  acks.map((a) => `${a.ack}${a.invariant ? ` (${a.invariant})` : ''}`).join(', ');

/** The acks' difference (their states, and the invariant a rejection names), or undefined. */
export function ackDifference(
  recorded: readonly Pick<AckRecord, 'ack' | 'invariant'>[],
  now: readonly Pick<AckRecord, 'ack' | 'invariant'>[],
): Difference | undefined {
  const [was, is] = [ackText(recorded), ackText(now)];
  return was === is ? undefined : { what: 'ack', recorded: was, now: is };
}

const answerText = (a: { result?: StageResult; failure?: string }) =>
  a.result ? `${a.result.artifact.type} ${a.result.artifact.uri}` : `failed: ${a.failure ?? 'no result recorded'}`;

/**
 * A stage's answer now against the recorded one: the artifact (its type and content address) and
 * the cost. Nothing else of the package: time stamps and the log's references may differ.
 */
export function stageDifferences(recorded: Pick<RecordedHop, 'result' | 'failure'>, now: StageRun): Difference[] {
  const result = 'result' in now ? now.result : undefined;
  if (!recorded.result || !result) {
    return recorded.result || result
      ? [{ what: 'stage', recorded: answerText(recorded), now: answerText('failure' in now ? now : { result }) }]
      : [];
  }
  const differences: Difference[] = [];
  const [was, is] = [recorded.result.artifact, result.artifact];
  if (was.type !== is.type || (was.uri !== is.uri && !sameButTimes(recorded.result.body, result.body)))
    differences.push({ what: 'artifact', recorded: `${was.type} ${was.uri}`, now: `${is.type} ${is.uri}` });
  if (recorded.result.cost_usd !== result.cost_usd)
    differences.push({ what: 'cost', recorded: `$${recorded.result.cost_usd}`, now: `$${result.cost_usd}` });
  return differences;
}

const ISO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/;
const withoutTimes = (value: unknown): unknown =>
  typeof value === 'string' && ISO_TIME.test(value)
    ? '<time>'
    : Array.isArray(value)
      ? value.map(withoutTimes)
      : value && typeof value === 'object'
        ? Object.fromEntries(Object.entries(value).map(([k, v]) => [k, withoutTimes(v)]))
        : value;

/** Two bodies that differ only in when they were made (a receipt's `written_at`): the same artifact, made at another time. */
export const sameButTimes = (a: unknown, b: unknown): boolean =>
  a !== undefined && b !== undefined && canonicalJson(withoutTimes(a)) === canonicalJson(withoutTimes(b));

/**
 * The hop block a package carried when it arrived for `hop`: the previous hop's, when it is the
 * one `hop` follows; after a human's decision, the human's hop (its reason is not recorded and
 * decides nothing); none for the job's first delivery.
 */
export function arrivedHop(hop: Hop, previous: Hop | undefined): Hop | undefined {
  const chain = hop.chain.slice(0, -1);
  if (hop.from === ORIGIN && chainLength(hop) === 2) return undefined;
  if (previous && follows(previous, hop)) return previous;
  const human: Hop | undefined = previous && {
    from: previous.to,
    to: HUMAN,
    reason: 'escalated',
    count: previous.count,
    ...keptChain([...previous.chain, HUMAN], previous.earlier),
  };
  if (human && follows(human, hop)) return human;
  // Not the hop it follows: a chain as close as the recorded hop tells (its whole length is right).
  return {
    from: chain.at(-2) ?? ORIGIN,
    to: chain.at(-1) ?? HUMAN,
    reason: 'escalated',
    count: hop.count - (hop.from === HUMAN ? 0 : 1),
    chain,
    ...(hop.earlier ? { earlier: hop.earlier } : {}),
  };
}

/** `hop` is the next delivery after `before`: its chain is before's with one more entry, kept as
 * the rail keeps a long chain. */
const follows = (before: Hop, hop: Hop): boolean =>
  canonicalJson(keptChain([...before.chain, hop.to], before.earlier)) ===
  canonicalJson({ chain: hop.chain, ...(hop.earlier ? { earlier: hop.earlier } : {}) });

export interface DiffWalkOptions {
  /** Stages whose recorded outputs stand (a stage that called a model): their work is not run again. */
  asRecorded?: ReadonlySet<string>;
}

/**
 * Walks a recorded job hop by hop on the current pipeline and stops at the first hop that
 * differs. Each hop gets the recorded package (not the one the current code would have made),
 * so one difference does not cascade. Per hop: the route from the package before it, the
 * admission's ack, the stage's answer now (`run`), and the acks after the work (the invariants,
 * from the recorded answer). Patch gates are taken as a new job takes them (the current code).
 */
export async function diffRecordedJob(
  history: string,
  job: RecordedJob,
  pipelines: readonly Pipeline[],
  run: StageRunner | undefined,
  opts: DiffWalkOptions = {},
): Promise<JobDiff> {
  const pipeline = findPipeline(pipelines, job.request.pipeline);
  if (!pipeline)
    return {
      history,
      workflowId: job.workflowId,
      hops: 0,
      notes: [
        `pipeline ${JSON.stringify(job.request.pipeline)} is not among ${pipelines.map((p) => p.name).join(', ')}: nothing compared`,
      ],
    };
  const diff: JobDiff = { history, workflowId: job.workflowId, pipeline: pipeline.name, hops: 0, notes: [] };
  const asRecorded = new Set<string>();
  try {
    return await walkJob(job, pipeline, run, opts, diff, asRecorded);
  } catch (err) {
    if (!(err instanceof RouteNeedsWorkflow)) throw err;
    return {
      ...diff,
      notes: [
        ...recordedNotes(asRecorded),
        `${diff.hops} hop(s) compared, then a route asks a workflow API here (${err.message}), which only a workflow can answer: nothing compared after it (\`handrail replay\` without --diff checks the whole job)`,
      ],
    };
  }
}

/** Which stages were not run again: their recorded outputs stand. */
const recordedNotes = (asRecorded: ReadonlySet<string>): string[] =>
  asRecorded.size > 0 ? [`not run again, their recorded outputs stand: ${[...asRecorded].join(', ')}`] : [];

/** diffRecordedJob's walk: counts compared hops on `diff` and the stages not run again in `asRecorded` as it goes. */
async function walkJob(
  job: RecordedJob,
  pipeline: Pipeline,
  run: StageRunner | undefined,
  opts: DiffWalkOptions,
  diff: JobDiff,
  asRecorded: Set<string>,
): Promise<JobDiff> {
  const stageHops = job.steps.filter((s): s is RecordedHop => s.kind === 'stage');
  const traceparent = job.request.traceparent ?? stageHops[0]?.work.package.trace.traceparent ?? '';
  const maxHops = job.request.max_hops ?? DEFAULT_MAX_HOPS;
  const acks = job.result?.acks;
  const keys = new Set(stageHops.map((s) => s.work.delivery_key));
  const notes = () => recordedNotes(asRecorded);
  const bodies: Record<string, Record<string, unknown>> = {};
  let step: Route | undefined = routeOf(pipeline, firstPackage(job.request, traceparent, pipeline));
  let previous: Hop | undefined;
  let countAtLastHumanDecision = 0;
  /** Reservations of a fan-out's branches admitted so far (what a later branch's ack sees held). */
  let held = 0;
  // What stages moved off the package, as the job remembers it (JobState.rememberMoved).
  const moved = new Set<string>();
  const hopRequest = (r: Pick<HopRequest, 'stage' | 'package' | 'reason' | 'from' | 'handoff'>): HopRequest => ({
    pipeline,
    ...r,
    maxHops,
    countAtLastHumanDecision,
    fallbackTraceparent: traceparent,
    fallbackJobId: job.workflowId,
    heldUsd: () => held,
    earlierOutputs: moved,
  });
  const stop = (hop: number, stage: string, differences: Difference[]): JobDiff => ({
    ...diff,
    notes: notes(),
    first: { hop, stage, differences },
  });
  const lastAckAt = (key: string) => (acks ? acks.map((a) => a.delivery_key).lastIndexOf(key) : -1);

  // A first hop the recording refused before any work (a malformed ticket, say).
  const opening = acks?.[0];
  if (opening && opening.stage !== HUMAN && !keys.has(opening.delivery_key)) {
    const refusal = refusedHop(step, opening, hopRequest);
    if (refusal) return stop(opening.hop, opening.stage, [refusal]);
    step = undefined;
  }
  for (const [i, recorded] of job.steps.entries()) {
    if (recorded.kind === 'merge') {
      // The rail's merge is not a stage: the route goes on from the merged package it recorded.
      if (!recorded.result) return { ...diff, notes: [...notes(), 'the merge recorded no result: compared up to it'] };
      const { artifact, body } = recorded.result;
      if (body && typeof body === 'object') bodies[artifact.type] = body as Record<string, unknown>;
      step = routeOf(
        pipeline,
        { ...recorded.work.package, artifacts: [...recorded.work.package.artifacts, artifact] },
        bodies,
      );
      previous = recorded.work.package.hop;
      held = 0;
      continue;
    }
    const { work } = recorded;
    const delivered = work.package;
    const hop = delivered.hop!;
    // The stage the rail admitted the hop for; `work.stage` is the one that ran (its fallback, when the card has one that answered).
    const stage = delivered.ack?.stage ?? work.stage;
    const differences: Difference[] = [];
    diff.hops++;
    if (hop.from === HUMAN) {
      // A human's decision chose this hop; the route before it was an escalation (checked below).
      countAtLastHumanDecision = hop.count;
      held = 0;
    } else {
      const moved = routeDifference(step, stage);
      if (moved) return stop(hop.count, stage, [moved]);
    }
    const { ack: _ack, context_ref: _snapshot, hop: _hop, ...content } = delivered;
    const before = arrivedHop(hop, previous);
    const request = hopRequest({
      stage,
      package: { ...content, ...(before ? { hop: before } : {}) },
      reason: hop.reason,
      from: hop.from,
      ...(hop.handoff_reason ? { handoff: hop.handoff_reason } : {}),
    });
    const admitted = admitHop(request);
    const decision = decideHop(admitted, request, null);
    const admission = ackDifference([delivered.ack ?? { ack: 'accepted' }], [decision]);
    if (admission) differences.push(admission);

    if (opts.asRecorded?.has(work.stage) || !run) asRecorded.add(work.stage);
    else differences.push(...stageDifferences(recorded, await run(recorded, job.steps.slice(0, i))));
    const card = pipeline.get(work.stage);
    // A hop the current code refuses (or to a stage it no longer has) has no outcome to compare.
    if (admission || !card) return stop(hop.count, stage, differences);

    const answer = recorded.result
      ? { result: recorded.result, card, ...(delivered.context_ref ? { snapshot: delivered.context_ref } : {}) }
      : { failure: recorded.failure ?? 'no result recorded' };
    // The stage echoes the ack it was delivered: the recorded one (the invariants check it, not the wording of its reason).
    const ack = delivered.ack ?? stampAck(admitted, request, decision, new Date(0));
    const outcome: HopOutcome = concludeHop(admitted, request, ack, new Date(ack.at), null, answer);
    const mine = acks?.filter((a) => a.delivery_key === work.delivery_key && a.stage !== HUMAN);
    const afterWork = mine && mine.length > 0 ? ackDifference(mine, outcome.acks) : undefined;
    if (afterWork) differences.push(afterWork);
    if (differences.length > 0) return stop(hop.count, stage, differences);

    if (outcome.ok && outcome.package) for (const key of movedByStage(delivered, outcome.package)) moved.add(key);
    if (outcome.ok && outcome.result?.body && typeof outcome.result.body === 'object')
      bodies[outcome.result.artifact.type] = outcome.result.body as Record<string, unknown>;
    if (step?.kind === 'fanout' && step.rule.fanOut.includes(stage)) {
      // A branch: the others go on from the hub's package, and the merge routes next.
      if (outcome.acks[0]?.ack === 'accepted') held += reservationUsd(pipeline.get(stage) ?? card);
    } else {
      step = outcome.ok ? routeOf(pipeline, outcome.package!, bodies) : undefined;
      previous = hop;
    }

    // A hop the recording refused before any work has no activity: its ack follows this hop's.
    const next = acks?.[lastAckAt(work.delivery_key) + 1];
    if (next && next.stage !== HUMAN && next.stage !== MERGE_STAGE && !keys.has(next.delivery_key)) {
      const refusal = refusedHop(step, next, hopRequest);
      if (refusal) return stop(next.hop, next.stage, [refusal]);
      step = undefined;
    }
    const following = job.steps[i + 1];
    if (
      following?.kind === 'stage' &&
      following.work.package.hop?.from === HUMAN &&
      step !== undefined &&
      step.kind !== 'escalate' &&
      !(step.kind === 'fanout' && step.rule.fanOut.includes(following.work.stage))
    ) {
      // The recording escalated here; the current code routes on.
      return stop(hop.count, stage, [
        { what: 'route', recorded: 'escalate (a human sent the next hop)', now: describeRoute(step) },
      ]);
    }
  }
  if (job.result?.status === 'completed' && step?.kind !== 'complete') {
    const last = stageHops.at(-1);
    return stop(last?.work.package.hop?.count ?? 0, last?.work.stage ?? pipeline.entry, [
      { what: 'route', recorded: 'complete', now: describeRoute(step) },
    ]);
  }
  return { ...diff, notes: notes() };
}

/** A route predicate asked Temporal (patched(), say), which only a workflow can answer. */
class RouteNeedsWorkflow extends Error {}

/** The route from a package, as the rail's `route`; a predicate's call into the workflow API is
 * told apart from every other failure (a stage runner's, say), which still throws as itself. */
function routeOf(...args: Parameters<typeof route>): Route {
  try {
    return route(...args);
  } catch (err) {
    if (err instanceof IllegalStateError) throw new RouteNeedsWorkflow(err.message);
    throw err;
  }
}

/** A hop the recording refused at admission (`refused`): the current code must route there and refuse it the same way. */
function refusedHop(
  step: Route | undefined,
  refused: AckRecord,
  hopRequest: (r: Pick<HopRequest, 'stage' | 'package' | 'reason' | 'from' | 'handoff'>) => HopRequest,
): Difference | undefined {
  const moved = routeDifference(step, refused.stage);
  if (moved || (step?.kind !== 'hop' && step?.kind !== 'fanout')) return moved;
  const handoff = step.kind === 'hop' ? step.handoff : (step.rule.handoff ?? 'specialization');
  const request = hopRequest({
    stage: refused.stage,
    package: step.package,
    reason: step.reason,
    from: step.from,
    ...(handoff ? { handoff } : {}),
  });
  return ackDifference([refused], [decideHop(admitHop(request), request, null)]);
}

/** The transcript a package references (the job's log), if any. */
export const transcriptOf = (refs: readonly string[]): string | undefined => refs.find(isTranscriptUri);
