/**
 * One hop: deliver one package to one stage. Admit, ack, run, settle — the decisions are pure
 * (workflows/rail/hop-decisions.ts); this shell does what needs Temporal: the duplicate lookup, the stage
 * activity (with its ACK timeout and fallback), the non-cancellable write, the trace.
 * `handoffJob` and `stageHop` both run hops through here, so a hop means the same everywhere.
 */
import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  isCancellation,
  log,
  patched,
  proxyActivities,
  TimeoutFailure,
  workflowInfo,
  type ActivityFunctionWithOptions,
} from '@temporalio/workflow';
import { TimeoutType } from '@temporalio/common';
import {
  LIMITS,
  approvalWords,
  canonicalJson,
  edgeOptions,
  inlineText,
  snapshotOf,
  shownArgs,
  toolCallDigest,
  type AckRecord,
  type CarriedProgress,
  type HandoffV1,
  type Pipeline,
  type Snapshot,
  stageTaskQueue,
  type StageCard,
  type StageResult,
  type StageFailureType,
  type StageWork,
  type ToolCallAwaiting,
} from '../contracts/rail';
import {
  admitHop,
  decideHop,
  deliveredPackage,
  stampAck,
  TARGET_UNAVAILABLE,
  type HopOutcome,
  type HopRequest,
  type StageAnswer,
} from './rail/hop-decisions';
import { claimsRecorded, concludeHop, foldsBehind } from './rail/conclude';
import { foldArtifacts } from './rail/earlier-artifacts';
import type { StageActivity } from '../activities/stage';
import { priorDelivery, recordDelivery, snapshotHeld } from './activities';
import { edgeSender } from './rail/hop-chain';
import { traceHop, type HopTrace } from './tracing';

export type { HopOutcome, HopRequest };

/** The stage activities of a pipeline, proxied once per card when the rail is created (the
 * workflow's info is set by then: writers go to the writers' queue next to the job's). */
export type StageProxies = ReadonlyMap<string, ActivityFunctionWithOptions<StageActivity>>;

export function proxyStages(pipeline: Pipeline): StageProxies {
  return new Map(
    pipeline.cards.map(
      (card) => [card.name, proxyActivities<Record<string, StageActivity>>(activityOptions(card))[card.name]!] as const,
    ),
  );
}

const activityOptions = (card: StageCard) => ({
  ...card.activity,
  taskQueue: stageTaskQueue(card, workflowInfo().taskQueue),
});

export interface HopOptions {
  /** Deliveries from outside the rail (`stageHop`): the rail looks the delivery key up before any
   * stage work, and records an accepted result itself, so a repeat is `duplicate` whoever serves
   * the stage. `handoffJob` made every earlier delivery of its job itself: its keys are new. */
  checkPriorDelivery: boolean;
  stages: StageProxies;
  /** Told of the hop's first ack as soon as it is decided, before any work (the job reserves the
   * wallet for an accepted hop here, so branches admitted next see the reservation). */
  onAck?: (ack: AckRecord) => void;
  /** Told when the hop ends, settled or thrown (the job releases the hop's reservation here). */
  onEnd?: () => void;
  /** The job's records as they stand, carried on each delivery the hop schedules (followers read
   * them from the history instead of asking the worker: contracts/stages.ts `CarriedProgress`). */
  carry?: () => CarriedProgress;
}

/**
 * Runs one hop and traces it: a span under the package's traceparent, a child per ack. A hop cut
 * short after its ack (the job was cancelled mid-stage) is traced as failed. One async function
 * from admission to settlement: SDK 1.24 records a source-mapped stack trace for every promise a
 * workflow makes, so each async layer on the hop path costs on every hop (docs/benchmarks.md).
 */
export async function runHop(r: HopRequest, options: HopOptions): Promise<HopOutcome> {
  const startedAt = Date.now();
  const a = admitHop(r);
  let ack: AckRecord | undefined;
  const trace = (acks: AckRecord[], hop: Pick<HopTrace, 'cost_usd' | 'ran' | 'failure'>) =>
    traceHop({
      ...hop,
      job_id: a.jobId,
      acks,
      from: a.hop.from,
      stage: acks[0]!.stage,
      reason: r.reason,
      traceparent: acks[0]!.traceparent,
      started_at: startedAt,
      ended_at: Date.now(),
    });
  try {
    const prior =
      a.deliverable && options.checkPriorDelivery
        ? await priorDelivery({ delivery_key: a.key, package: a.arrived })
        : null;
    // Decided after the lookup: the wallet a hub's branches hold can change while it is awaited.
    ack = stampAck(a, r, decideHop(a, r, prior), new Date());
    options.onAck?.(ack);
    // The package as delivered at this hop, refused or not (what arrived, when it is no package).
    const snapshot = snapshotOf(a.jobId, a.arrived ? { ...a.arrived, hop: a.hop, ack } : r.package);
    let outcome: HopOutcome;
    if (ack.ack !== 'accepted' || !a.arrived || !a.card) {
      outcome = withSnapshot(concludeHop(a, r, ack, new Date(), prior), snapshot, false);
    } else {
      const edge = r.pipeline.edge(edgeSender(r.pipeline, a.hop, a.arrived), a.stage);
      // The stage's worker stores the snapshot (the same bytes, the same address) before its work.
      const delivered = { ...deliveredPackage({ ...a, arrived: a.arrived }, ack), context_ref: snapshot.uri };
      const work: StageWork = {
        stage: a.stage,
        package: delivered,
        delivery_key: a.key,
        ...(edge ? { edge: edgeOptions(edge) } : {}),
        ...(r.hookResults?.length ? { hook_results: r.hookResults } : {}),
        ...(inlineText(delivered.artifacts[0]) !== undefined ? { store_entry: true as const } : {}),
      };
      const answer = await runStage(r.pipeline, options, a.card, work, a.reason);
      // A stage's word that another delivery recorded this one is never taken: the rail looks.
      const claimed = claimsRecorded(answer);
      const recorded = claimed ? await priorDelivery({ delivery_key: a.key, package: a.arrived }) : null;
      const now = new Date();
      let concluded = concludeHop(a, r, ack, now, prior, answer, recorded);
      // A stage stores the snapshot before its work, so one that answered should hold it; one that
      // failed may have failed before (nobody picked the hop up, or it refused the delivery outright).
      let stored = 'result' in answer;
      // But a worker's storing is its word: before a package that points at the snapshot is taken
      // — folded behind it by the stage, or long enough that the job's rail folds it there — the
      // rail asks the store. A fold the stage made is refused at this hop (`fold_snapshot_stored`),
      // not found broken later by `jobArtifacts`; the rail keeps the snapshot, and folds nothing
      // behind it itself. Asked only for such a package, so only a revision loop pays the read.
      if (stored && reliesOnSnapshot(concluded, snapshot.uri, r.pipeline) && patched(FOLD_SNAPSHOT_PATCH)) {
        const unheld = await unheldSnapshot(snapshot.uri);
        if (unheld !== undefined) {
          stored = false;
          if (foldsBehind(concluded, snapshot.uri))
            concluded = concludeHop(a, r, ack, now, prior, answer, recorded, unheld);
        }
      }
      if (options.checkPriorDelivery && concluded.ok && concluded.result && !claimed)
        await recordAccepted(a.key, concluded.stage, a.arrived, concluded.result);
      outcome = withSnapshot(concluded, snapshot, stored);
    }
    trace(outcome.acks, {
      cost_usd: outcome.costUsd,
      ...(outcome.stage !== outcome.acks[0]!.stage ? { ran: outcome.stage } : {}),
      ...(outcome.failure ? { failure: outcome.failure } : {}),
    });
    return outcome;
  } catch (err) {
    if (ack) trace([ack], { cost_usd: 0, failure: isCancellation(err) ? 'cancelled' : describeFailure(err) });
    throw err;
  } finally {
    options.onEnd?.();
  }
}

/** The patch that has the rail check the store for a snapshot a package relies on
 * (docs/replay.md): histories from before it schedule no `snapshotHeld` and replay without it. */
export const FOLD_SNAPSHOT_PATCH = 'fold-snapshot-checked';

/** Whether the accepted package will point at this hop's snapshot: the stage folded it there, or
 * it is long enough that the job's rail folds it there between hops (earlier-artifacts.ts). */
function reliesOnSnapshot(outcome: HopOutcome, snapshot: string, pipeline: Pipeline): boolean {
  if (!outcome.ok || !outcome.package) return false;
  if (foldsBehind(outcome, snapshot)) return true;
  const at = { card: pipeline.get(outcome.stage), storedSnapshot: snapshot };
  return foldArtifacts(outcome.package, at) !== outcome.package;
}

/** Why the store does not hold `snapshot`, or undefined when it does. A store the rail cannot
 * read proves nothing either: the fold is refused as unproven (the job escalates; a human retries). */
async function unheldSnapshot(snapshot: string): Promise<string | undefined> {
  try {
    if (await snapshotHeld({ snapshot })) return undefined;
    return `the package was folded behind ${snapshot}, which the store does not hold: the stage's worker did not store its delivery's snapshot`;
  } catch (err) {
    if (isCancellation(err)) throw err;
    return `the package was folded behind ${snapshot}, and the rail could not read the store to check it holds it (${describeFailure(err)})`;
  }
}

/** The rail's record of a result it accepted for a direct delivery. A store that stays down costs
 * only the record (logged): the result stands, and a repeat is then worked again by a stage that
 * keeps no record of its own, as if never delivered. */
async function recordAccepted(key: string, stage: string, arrived: HandoffV1, result: StageResult): Promise<void> {
  try {
    await recordDelivery({ delivery_key: key, stage, package: arrived, result });
  } catch (err) {
    if (isCancellation(err)) throw err;
    log.warn('the rail could not record an accepted delivery', { delivery_key: key, error: String(err) });
  }
}

/** The hop's first ack names its snapshot. One no stage stored (the hop was refused, or answered
 * as a duplicate) stays with the outcome, for the rail to keep and answer for. */
function withSnapshot(outcome: HopOutcome, snapshot: Snapshot, stored: boolean): HopOutcome {
  const [first, ...rest] = outcome.acks;
  if (!first) return outcome;
  return {
    ...outcome,
    acks: [{ ...first, snapshot: snapshot.uri }, ...rest],
    ...(stored ? {} : { unstoredSnapshot: snapshot }),
  };
}

/**
 * Runs the stage activity. A stage whose workers do not pick the hop up in time (the card's
 * scheduleToStartTimeout is the ACK timeout) is tried once more, then its declared fallback,
 * else the hop fails and the job escalates. Business failures are not retried here:
 * the card's retry policy already marks them non-retryable.
 */
async function runStage(
  pipeline: Pipeline,
  { stages: proxies, carry }: Pick<HopOptions, 'stages' | 'carry'>,
  card: StageCard,
  work: StageWork,
  reason: string,
): Promise<StageAnswer> {
  const fallback = card.fallback ? pipeline.get(card.fallback) : undefined;
  const attempts = [card, card, ...(fallback ? [fallback] : [])];
  let lastTimeout = '';
  for (const target of attempts) {
    const activity = proxies.get(target.name)!;
    // Once the rail decided to write, the write and its receipt finish even if the job is
    // cancelled meanwhile: no half-done write (the write itself is idempotent).
    const run = () =>
      activity.executeWithOptions({ ...activityOptions(target), summary: `${target.name}: ${reason}`.slice(0, 200) }, [
        // Carried as each attempt is scheduled: another branch may have settled since the last.
        { ...work, stage: target.name, ...(carry ? { rail: carry() } : {}) },
      ]);
    try {
      const result = target.writes !== null ? await CancellationScope.nonCancellable(run) : await run();
      const snapshot = work.package.context_ref;
      return { result, card: target, ...(snapshot !== undefined ? { snapshot } : {}) };
    } catch (err) {
      if (isCancellation(err)) throw err;
      if (
        err instanceof ActivityFailure &&
        err.cause instanceof TimeoutFailure &&
        err.cause.timeoutType === TimeoutType.SCHEDULE_TO_START
      ) {
        // The queue names which worker is missing (the writers' one, say).
        lastTimeout = `no "${target.name}" worker picked the hop up within ${String(target.activity.scheduleToStartTimeout)} on task queue "${stageTaskQueue(target, workflowInfo().taskQueue)}"`;
        continue;
      }
      const type = stageFailureType(err);
      const toolCall = type === TOOL_APPROVAL_REQUIRED ? awaitedCall(err, work) : undefined;
      return {
        failure: `${target.name} failed: ${describeFailure(err)}`,
        ...(type ? { failureType: type } : {}),
        ...(toolCall ? { toolCall } : {}),
      };
    }
  }
  return { failure: `stage unavailable: ${lastTimeout}`, failureType: TARGET_UNAVAILABLE };
}

const TOOL_APPROVAL_REQUIRED = 'ToolApprovalRequired' satisfies StageFailureType;

/**
 * The tool call a stage's loop stopped at, as the rail names it: where its steps resume is the
 * rail's own word (this hop's delivery key, or the one a human's earlier word on this hop's loop
 * named), never the stage's; the digest is computed here over the call shown, so an approval holds
 * for what the human read. Undefined (the hop escalates as any failed one) when the call is malformed.
 */
function awaitedCall(err: unknown, work: StageWork): ToolCallAwaiting | undefined {
  const cause = causeOf(err);
  const details = cause instanceof ApplicationFailure ? cause.details?.[0] : undefined;
  const call = (details as { tool_call?: Partial<ToolCallAwaiting> } | undefined)?.tool_call;
  if (typeof call?.name !== 'string' || typeof call.call_id !== 'string') return undefined;
  if (call.name.length > LIMITS.name * 4 || call.call_id.length > LIMITS.name * 4) return undefined;
  const named = { name: call.name, call_id: call.call_id, args: call.args ?? null, resume_key: resumeKeyOf(work) };
  if (canonicalJson(named.args).length > LIMITS.shortText * 8) return undefined;
  // Shown as the job's constraints allow; named (the digest) as the model gave it.
  return { ...named, args: shownArgs(work.package.constraints, named.args), digest: toolCallDigest(named) };
}

/** Where a stage's loop keeps its steps: this hop's delivery, or the hop a human's word resumes. */
function resumeKeyOf(work: StageWork): string {
  return approvalWords(work.hook_results, work.package.job_id, work.stage)[0]?.resume_key ?? work.delivery_key;
}

/** What an activity failure says happened: the stage's own failure under Temporal's wrapper. */
const causeOf = (err: unknown): unknown => (err instanceof ActivityFailure ? err.cause : err);

/** What a failed activity says went wrong, for an ack or an escalation. */
export function describeFailure(err: unknown): string {
  const cause = causeOf(err);
  if (cause instanceof ApplicationFailure) return `${cause.type ?? 'Error'}: ${cause.message}`;
  return cause instanceof Error ? cause.message : String(cause);
}

/** The type of a typed stage failure (ApplicationFailure), which the rail may ack on its own. */
function stageFailureType(err: unknown): string | undefined {
  const cause = causeOf(err);
  return cause instanceof ApplicationFailure ? (cause.type ?? undefined) : undefined;
}
