/**
 * One hop: deliver one package to one stage. Validate, ack, run, check what came back.
 * `handoffJob` and `stageHop` both deliver through here, so a hop means the same everywhere.
 */
import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  isCancellation,
  patched,
  proxyActivities,
  proxyLocalActivities,
  TimeoutFailure,
} from '@temporalio/workflow';
import { TimeoutType } from '@temporalio/common';
import { HANDOFF_V1, isSlug, isValidTraceparent, validateHandoff, type AckRecord, type HandoffV1, type StageCard, type StageResult, type StageWork } from '../contracts';
import { REFERENCE_STAGES, createStageRegistry } from '../contracts/stages';
import { ackRecord, decideAck, roleMismatch, type AckDecision } from './rail/ack';
import { charge } from './rail/budget';
import { deliveryKey, nextHop } from './rail/hops';
import { checkEmitted } from './rail/invariants';
import { traceHop, type HopTrace } from './tracing';

/** The checked stage registry the rail routes through (the worker checks the same cards). */
export const stages = createStageRegistry(REFERENCE_STAGES);

type StageActivity = (work: StageWork) => Promise<StageResult>;

type PriorDelivery = { priorDelivery(input: { delivery_key: string }): Promise<StageResult | null> };

/**
 * Patch `prior-delivery-activity` (2026-11-29). The duplicate lookup used to be a local activity
 * on every hop. A query arriving while it ran could close a workflow task on the local-activity
 * marker alone, and SDK 1.24 then failed to replay that history on the very code that wrote it
 * (test/histories/known-problems). Now `handoffJob` skips the lookup — its delivery keys are
 * unique by construction, and a retried stage activity returns its recorded result anyway — and
 * `stageHop`, whose deliveries come from outside, looks up with an ordinary activity.
 * Histories recorded before the patch replay through the old branch; see docs/replay.md for when
 * it can go (deprecatePatch, then removal).
 */
export const PRIOR_DELIVERY_PATCH = 'prior-delivery-activity';

const { priorDelivery: priorDeliveryLocal } = proxyLocalActivities<PriorDelivery>({
  startToCloseTimeout: '10s',
  retry: { maximumAttempts: 6, maximumInterval: '10s' },
});
// One indexed read before any stage work. If the store stays unreachable the hop cannot be
// proven new, so the delivery fails (visibly, with no write) rather than risk a second write.
const { priorDelivery } = proxyActivities<PriorDelivery>({
  startToCloseTimeout: '10s',
  retry: { maximumAttempts: 6, maximumInterval: '10s' },
  summary: 'duplicate check',
});

export interface Delivery {
  stage: string;
  /** As received: it is validated here, never trusted. */
  package: unknown;
  reason: string;
  /** Sender; defaults to the stage that last held the package. */
  from?: string;
  /** Who sent it when a human decided the hop. */
  actor?: string;
  maxHops: number;
  countAtLastHumanDecision?: number;
  /** Used on acks of packages too broken to carry a trace. */
  fallbackTraceparent: string;
  fallbackJobId: string;
  /** Ask the store whether this delivery already completed (deliveries from outside the rail). */
  checkPriorDelivery: boolean;
}

export interface HopOutcome {
  /** Every ack of this hop in order: the pre-work ack, then `rejected_invariant` if the output broke one. */
  acks: AckRecord[];
  /** The package after the hop: the stage's output with the wallet charged, or the delivered
   * package when the hop was refused. Undefined only when what arrived was not a valid package. */
  package?: HandoffV1;
  result?: StageResult;
  /** True when the stage ran (or a duplicate was answered) and its output passed every invariant. */
  ok: boolean;
  /** Why the stage work failed (escalation reason), when it did. */
  failure?: string;
  /** Which stage actually did the work (differs when the fallback stage answered). */
  stage: string;
  costUsd: number;
  overspentUsd: number;
}

/** Delivers one hop and traces it: a span under the package's traceparent, a child per ack.
 * A hop cut short after its ack (the job was cancelled mid-stage) is traced as failed. */
export async function deliver(input: Delivery): Promise<HopOutcome> {
  const startedAt = Date.now();
  let acked: { ack: AckRecord; from: string; jobId: string } | undefined;
  const trace = (hop: Pick<HopTrace, 'job_id' | 'acks' | 'from' | 'cost_usd' | 'ran' | 'failure'>) =>
    traceHop({ ...hop, stage: hop.acks[0]!.stage, reason: input.reason, traceparent: hop.acks[0]!.traceparent, started_at: startedAt, ended_at: Date.now() });
  try {
    const outcome = await deliverHop(input, (ack, from, jobId) => (acked = { ack, from, jobId }));
    trace({
      job_id: acked!.jobId,
      acks: outcome.acks,
      from: acked!.from,
      cost_usd: outcome.costUsd,
      ...(outcome.stage !== outcome.acks[0]!.stage ? { ran: outcome.stage } : {}),
      ...(outcome.failure ? { failure: outcome.failure } : {}),
    });
    return outcome;
  } catch (err) {
    if (acked) trace({ job_id: acked.jobId, acks: [acked.ack], from: acked.from, cost_usd: 0, failure: isCancellation(err) ? 'cancelled' : describeFailure(err) });
    throw err;
  }
}

async function deliverHop(input: Delivery, onAck: (ack: AckRecord, from: string, jobId: string) => void): Promise<HopOutcome> {
  // A name that is not a stage slug cannot be registered; it is acked (rejected_role) under a
  // placeholder so the ack itself stays a valid record.
  const d = isSlug(input.stage) ? input : { ...input, stage: 'unknown-stage', reason: `${input.reason} (asked for ${JSON.stringify(input.stage.slice(0, 40))})` };
  const card = stages.get(d.stage);
  const validation = validateHandoff(d.package, { accept: card?.packageVersions ?? [HANDOFF_V1] });
  const arrived = validation.ok ? validation.value : undefined;
  const hop = nextHop(arrived?.hop, d.stage, d.reason, d.from);
  const key = deliveryKey({ job_id: arrived?.job_id ?? d.fallbackJobId, hop: arrived?.hop }, d.stage);
  const stamp = (decision: AckDecision, stage = d.stage) =>
    ackRecord(decision, { stage, hop, deliveryKey: key, traceparent: arrived?.trace.traceparent ?? carriedTrace(d.package) ?? d.fallbackTraceparent, now: new Date(), actor: d.actor });

  // Only a well-formed package for the right stage is worth a lookup.
  let prior: StageResult | null = null;
  if (arrived && card && !roleMismatch(card, arrived)) {
    if (!patched(PRIOR_DELIVERY_PATCH)) prior = await priorDeliveryLocal({ delivery_key: key });
    else if (d.checkPriorDelivery) prior = await priorDelivery({ delivery_key: key });
  }
  const decision = decideAck({
    stage: d.stage,
    card,
    validation,
    hop,
    maxHops: d.maxHops,
    countAtLastHumanDecision: d.countAtLastHumanDecision,
    alreadyDelivered: prior !== null,
  });
  const ack = stamp(decision);
  onAck(ack, hop.from, arrived?.job_id ?? d.fallbackJobId);
  const refused = (extra: Partial<HopOutcome> = {}): HopOutcome => ({
    acks: [ack],
    package: arrived && { ...arrived, ack },
    ok: false,
    stage: d.stage,
    costUsd: 0,
    overspentUsd: 0,
    ...extra,
  });

  if (decision.ack === 'duplicate' && prior) {
    return { acks: [ack], package: { ...prior.package, ack }, result: prior, ok: true, stage: d.stage, costUsd: 0, overspentUsd: 0 };
  }
  if (decision.ack !== 'accepted' || !arrived || !card) return refused();

  const delivered: HandoffV1 = { ...arrived, hop, ack };
  const work = await runStage(card, { stage: d.stage as StageWork['stage'], package: delivered, delivery_key: key }, d.reason);
  if ('failure' in work) return refused({ ok: false, failure: work.failure, package: delivered });

  const { result, card: ranCard } = work;
  // A cost that is not a number is a violation (below); the wallet is charged nothing for it.
  const reported = Number.isFinite(result.cost_usd) && result.cost_usd >= 0 ? result.cost_usd : 0;
  const { budget, overspentUsd } = charge(delivered.budget, reported);
  const emitted = validateHandoff(result.package, { accept: ranCard.packageVersions });
  const violations = emitted.ok
    ? checkEmitted({ delivered, emitted: emitted.value, artifact: result.artifact, body: result.body, costUsd: result.cost_usd, card: ranCard })
    : [{ invariant: 'emitted_schema_valid', reason: `the emitted package fails ${HANDOFF_V1}: ${emitted.errors.map((e) => `${e.path} ${e.message}`).join('; ')}` }];
  const charged = { ...delivered, budget };
  if (violations.length > 0) {
    const [first] = violations;
    const rejection = stamp(
      { ack: 'rejected_invariant', invariant: first!.invariant, reason: violations.map((v) => `${v.invariant}: ${v.reason}`).join('; ') },
      ranCard.name,
    );
    return { acks: [ack, rejection], package: { ...charged, ack: rejection }, result, ok: false, stage: ranCard.name, costUsd: reported, overspentUsd };
  }
  return {
    acks: [ack],
    package: { ...(emitted.ok ? emitted.value : delivered), budget },
    result,
    ok: true,
    stage: ranCard.name,
    costUsd: reported,
    overspentUsd,
  };
}

/**
 * Runs the stage activity. A stage whose workers do not pick the hop up in time (the card's
 * scheduleToStartTimeout is the ACK timeout) is tried once more, then its declared fallback,
 * else the hop fails and the job escalates (seed 004). Business failures are not retried here:
 * the card's retry policy already marks them non-retryable.
 */
async function runStage(card: StageCard, work: StageWork, reason: string): Promise<{ result: StageResult; card: StageCard } | { failure: string }> {
  const fallback = card.fallback ? stages.get(card.fallback) : undefined;
  const attempts = [card, card, ...(fallback ? [fallback] : [])];
  let lastTimeout = '';
  for (const target of attempts) {
    const activity = proxyActivities<Record<string, StageActivity>>({
      ...target.activity,
      ...(target.taskQueue ? { taskQueue: target.taskQueue } : {}),
      summary: `${target.name}: ${reason}`.slice(0, 200),
    })[target.name]!;
    // Once the rail decided to write, the write and its receipt finish even if the job is
    // cancelled meanwhile: no half-done write (the write itself is idempotent).
    const run = () => activity({ ...work, stage: target.name as StageWork['stage'] });
    try {
      const result = target.writes !== null ? await CancellationScope.nonCancellable(run) : await run();
      return { result, card: target };
    } catch (err) {
      if (isCancellation(err)) throw err;
      if (err instanceof ActivityFailure && err.cause instanceof TimeoutFailure && err.cause.timeoutType === TimeoutType.SCHEDULE_TO_START) {
        lastTimeout = `no "${target.name}" worker picked the hop up within ${String(target.activity.scheduleToStartTimeout)}`;
        continue;
      }
      return { failure: `${target.name} failed: ${describeFailure(err)}` };
    }
  }
  return { failure: `stage unavailable: ${lastTimeout}` };
}

/** A rejected package's own traceparent, when it carries a valid one: the ack of a refused hop
 * still belongs to the sender's trace (seed 001: the same traceparent on A's emit and B's ack). */
function carriedTrace(pkg: unknown): string | undefined {
  const candidate = (pkg as { trace?: { traceparent?: unknown } } | null)?.trace?.traceparent;
  return typeof candidate === 'string' && isValidTraceparent(candidate) ? candidate : undefined;
}

function describeFailure(err: unknown): string {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  if (cause instanceof ApplicationFailure) return `${cause.type ?? 'Error'}: ${cause.message}`;
  return cause instanceof Error ? cause.message : String(cause);
}
