/**
 * One hop's decisions, pure: what arrived, which stage and key it is for, the ack, and — after the
 * stage ran — what the wallet is charged and which invariants the output broke. The Temporal
 * shell (workflows/hop.ts) only gathers facts (the duplicate lookup, the stage's result) and
 * records what these functions decide.
 */
import {
  HANDOFF_V1,
  isSlug,
  isValidTraceparent,
  roleMismatch,
  validateHandoff,
  type HandoffValidation,
  type HandoffV1,
  type Hop,
  type Pipeline,
  type StageCard,
  type StageResult,
} from '../../contracts';
import { decideAck, type AckDecision } from './ack';
import { charge } from './budget';
import { deliveryKey, nextHop } from './hops';
import { checkEmitted, type Violation } from './invariants';

export interface HopRequest {
  pipeline: Pipeline;
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
}

/** What the rail knows about a hop before any stage work. */
export interface Admission {
  /** The stage asked for, or `unknown-stage` when the name is not a slug. */
  stage: string;
  reason: string;
  card: StageCard | undefined;
  validation: HandoffValidation;
  /** The package when it is valid (upgraded to a version the stage reads). */
  arrived: HandoffV1 | undefined;
  hop: Hop;
  key: string;
  jobId: string;
  traceparent: string;
  /** A well-formed package for the right stage: only such a delivery is worth a duplicate lookup. */
  deliverable: boolean;
}

export function admitHop(r: HopRequest): Admission {
  // A name that is not a stage slug cannot be registered; it is acked (rejected_role) under a
  // placeholder so the ack itself stays a valid record.
  const named = typeof r.stage === 'string' && isSlug(r.stage);
  const stage = named ? r.stage : 'unknown-stage';
  const reason = named ? r.reason : `${r.reason} (asked for ${JSON.stringify(String(r.stage).slice(0, 40))})`;
  const card = r.pipeline.get(stage);
  const validation = validateHandoff(r.package, { accept: card?.packageVersions ?? [HANDOFF_V1], registry: r.pipeline.versions });
  const arrived = validation.ok ? validation.value : undefined;
  const hop = nextHop(arrived?.hop, stage, reason, r.from);
  const jobId = arrived?.job_id ?? r.fallbackJobId;
  return {
    stage,
    reason,
    card,
    validation,
    arrived,
    hop,
    key: deliveryKey({ job_id: jobId, hop: arrived?.hop }, stage),
    jobId,
    traceparent: arrived?.trace.traceparent ?? carriedTrace(r.package) ?? r.fallbackTraceparent,
    deliverable: arrived !== undefined && card !== undefined && roleMismatch(card, arrived) === null,
  };
}

/** The ack: decideAck over the admission (ordered checks: contracts/README, workflows/rail/ack.ts). */
export function decideHop(a: Admission, r: Pick<HopRequest, 'pipeline' | 'maxHops' | 'countAtLastHumanDecision'>, prior: Pick<StageResult, 'recorded_by_other'> | null): AckDecision {
  return decideAck({
    stage: a.stage,
    card: a.card,
    validation: a.validation,
    hop: a.hop,
    maxHops: r.maxHops,
    revisits: r.pipeline.revisits,
    countAtLastHumanDecision: r.countAtLastHumanDecision,
    alreadyDelivered: prior !== null,
    otherPackage: prior?.recorded_by_other === 'different',
  });
}

export interface Settlement {
  /** What the wallet is charged: the reported cost when it is a real amount, else nothing. */
  costUsd: number;
  overspentUsd: number;
  /** The delivered package with the wallet charged. */
  charged: HandoffV1;
  /** The emitted package (validated) with the wallet charged, when it is valid. */
  emitted: HandoffV1 | undefined;
  violations: Violation[];
}

/** After the stage ran: charge the wallet and check what it emitted against every invariant. */
export function settleHop(pipeline: Pipeline, delivered: HandoffV1, result: StageResult, card: StageCard): Settlement {
  // A cost that is not a number is a violation (checkEmitted); the wallet is charged nothing for it.
  const costUsd = Number.isFinite(result.cost_usd) && result.cost_usd >= 0 ? result.cost_usd : 0;
  const { budget, overspentUsd } = charge(delivered.budget, costUsd);
  const emitted = validateHandoff(result.package, { accept: card.packageVersions, registry: pipeline.versions });
  const violations = emitted.ok
    ? checkEmitted({ delivered, emitted: emitted.value, artifact: result.artifact, body: result.body, costUsd: result.cost_usd, card })
    : [{ invariant: 'emitted_schema_valid', reason: `the emitted package fails ${card.packageVersions.join(' | ')}: ${emitted.errors.map((e) => `${e.path} ${e.message}`).join('; ')}` }];
  return { costUsd, overspentUsd, charged: { ...delivered, budget }, emitted: emitted.ok ? { ...emitted.value, budget } : undefined, violations };
}

/** A rejected package's own traceparent, when it carries a valid one: the ack of a refused hop
 * still belongs to the sender's trace (seed 001: the same traceparent on A's emit and B's ack). */
function carriedTrace(pkg: unknown): string | undefined {
  const candidate = (pkg as { trace?: { traceparent?: unknown } } | null)?.trace?.traceparent;
  return typeof candidate === 'string' && isValidTraceparent(candidate) ? candidate : undefined;
}
