/**
 * One hop: deliver one package to one stage. Admit, ack, run, settle — the decisions are pure
 * (workflows/rail/hop.ts); this shell does what needs Temporal: the duplicate lookup, the stage
 * activity (with its ACK timeout and fallback), the non-cancellable write, the trace.
 * `handoffJob` and `stageHop` both run hops through here, so a hop means the same everywhere.
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
  type ActivityFunctionWithOptions,
} from '@temporalio/workflow';
import { TimeoutType } from '@temporalio/common';
import type { AckRecord, HandoffV1, Pipeline, StageCard, StageResult, StageWork } from '../contracts';
import { ackRecord, type AckDecision } from './rail/ack';
import { admitHop, decideHop, settleHop, type HopRequest } from './rail/hop';
import { traceHop, type HopTrace } from './tracing';

export type { HopRequest };

type StageActivity = (work: StageWork) => Promise<StageResult>;

type PriorDelivery = { priorDelivery(input: { delivery_key: string; package?: HandoffV1 }): Promise<StageResult | null> };

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

/** The stage activities of a pipeline, proxied once per card when the rail is created. */
export type StageProxies = ReadonlyMap<string, ActivityFunctionWithOptions<StageActivity>>;

export function proxyStages(pipeline: Pipeline): StageProxies {
  return new Map(
    pipeline.cards.map((card) => [card.name, proxyActivities<Record<string, StageActivity>>(activityOptions(card))[card.name]!] as const),
  );
}

const activityOptions = (card: StageCard) => ({ ...card.activity, ...(card.taskQueue ? { taskQueue: card.taskQueue } : {}) });

export interface HopOptions {
  /** Ask the store whether this delivery already completed (deliveries from outside the rail). */
  checkPriorDelivery: boolean;
  stages: StageProxies;
}

/** Runs one hop and traces it: a span under the package's traceparent, a child per ack.
 * A hop cut short after its ack (the job was cancelled mid-stage) is traced as failed. */
export async function runHop(request: HopRequest, options: HopOptions): Promise<HopOutcome> {
  const startedAt = Date.now();
  let acked: { ack: AckRecord; from: string; jobId: string } | undefined;
  const trace = (hop: Pick<HopTrace, 'job_id' | 'acks' | 'from' | 'cost_usd' | 'ran' | 'failure'>) =>
    traceHop({ ...hop, stage: hop.acks[0]!.stage, reason: request.reason, traceparent: hop.acks[0]!.traceparent, started_at: startedAt, ended_at: Date.now() });
  try {
    const outcome = await hopOnce(request, options, (ack, from, jobId) => (acked = { ack, from, jobId }));
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

async function hopOnce(r: HopRequest, options: HopOptions, onAck: (ack: AckRecord, from: string, jobId: string) => void): Promise<HopOutcome> {
  const a = admitHop(r);
  const stamp = (decision: AckDecision, stage = a.stage) =>
    ackRecord(decision, { stage, hop: a.hop, deliveryKey: a.key, traceparent: a.traceparent, now: new Date(), actor: r.actor });

  let prior: StageResult | null = null;
  if (a.deliverable) {
    if (!patched(PRIOR_DELIVERY_PATCH)) prior = await priorDeliveryLocal({ delivery_key: a.key });
    else if (options.checkPriorDelivery) prior = await priorDelivery({ delivery_key: a.key, package: a.arrived });
  }
  const decision = decideHop(a, r, prior);
  const ack = stamp(decision);
  onAck(ack, a.hop.from, a.jobId);
  const refused = (extra: Partial<HopOutcome> = {}): HopOutcome => ({
    acks: [ack],
    package: a.arrived && { ...a.arrived, ack },
    ok: false,
    stage: a.stage,
    costUsd: 0,
    overspentUsd: 0,
    ...extra,
  });

  if (decision.ack === 'duplicate' && prior) {
    return { acks: [ack], package: { ...prior.package, ack }, result: prior, ok: true, stage: a.stage, costUsd: 0, overspentUsd: 0 };
  }
  if (decision.ack !== 'accepted' || !a.arrived || !a.card) return refused();

  const delivered: HandoffV1 = { ...a.arrived, hop: a.hop, ack };
  const work = await runStage(r.pipeline, options.stages, a.card, { stage: a.stage, package: delivered, delivery_key: a.key }, a.reason);
  if ('failure' in work) return refused({ ok: false, failure: work.failure, package: delivered });

  const { result, card: ranCard } = work;
  // Another delivery recorded this key meanwhile (a concurrent twin, or a different package).
  if (result.recorded_by_other) {
    const answer = stamp(decideHop(a, r, result));
    return answer.ack === 'duplicate'
      ? { acks: [answer], package: { ...result.package, ack: answer }, result, ok: true, stage: a.stage, costUsd: 0, overspentUsd: 0 }
      : { ...refused(), acks: [answer], package: { ...a.arrived, ack: answer } };
  }
  const settled = settleHop(r.pipeline, delivered, result, ranCard);
  const paid = { result, stage: ranCard.name, costUsd: settled.costUsd, overspentUsd: settled.overspentUsd };
  if (settled.violations.length > 0) {
    const [first] = settled.violations;
    const rejection = stamp(
      { ack: 'rejected_invariant', invariant: first!.invariant, reason: settled.violations.map((v) => `${v.invariant}: ${v.reason}`).join('; ') },
      ranCard.name,
    );
    return { acks: [ack, rejection], package: { ...settled.charged, ack: rejection }, ok: false, ...paid };
  }
  return { acks: [ack], package: settled.emitted ?? settled.charged, ok: true, ...paid };
}

/**
 * Runs the stage activity. A stage whose workers do not pick the hop up in time (the card's
 * scheduleToStartTimeout is the ACK timeout) is tried once more, then its declared fallback,
 * else the hop fails and the job escalates (seed 004). Business failures are not retried here:
 * the card's retry policy already marks them non-retryable.
 */
async function runStage(
  pipeline: Pipeline,
  proxies: StageProxies,
  card: StageCard,
  work: StageWork,
  reason: string,
): Promise<{ result: StageResult; card: StageCard } | { failure: string }> {
  const fallback = card.fallback ? pipeline.get(card.fallback) : undefined;
  const attempts = [card, card, ...(fallback ? [fallback] : [])];
  let lastTimeout = '';
  for (const target of attempts) {
    const activity = proxies.get(target.name)!;
    // Once the rail decided to write, the write and its receipt finish even if the job is
    // cancelled meanwhile: no half-done write (the write itself is idempotent).
    const run = () => activity.executeWithOptions({ ...activityOptions(target), summary: `${target.name}: ${reason}`.slice(0, 200) }, [{ ...work, stage: target.name }]);
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

function describeFailure(err: unknown): string {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  if (cause instanceof ApplicationFailure) return `${cause.type ?? 'Error'}: ${cause.message}`;
  return cause instanceof Error ? cause.message : String(cause);
}
