/**
 * One hop's decisions, pure: what arrived, which stage and key it is for, the ack, and — after the
 * stage ran — what the wallet is charged and which invariants the output broke. The Temporal
 * shell (workflows/run-hop.ts) only gathers facts (the duplicate lookup, the stage's result) and
 * records what these functions decide.
 */
import {
  HANDOFF_V1,
  type AckRecord,
  isSlug,
  isValidTraceparent,
  roleMismatch,
  validateHandoff,
  type HandoffReason,
  type HandoffValidation,
  type Snapshot,
  type HandoffV1,
  type Hop,
  type HookResult,
  type Pipeline,
  type StageCard,
  type StageResult,
  type ToolCallAwaiting,
} from '../../contracts/rail';
import { ackRecord, decideAck, type AckDecision } from './ack';
import { charge, reportedUsd, settle } from './budget';
import { deliveryKey, nextHop } from './hop-chain';
import { checkEmitted, type EmittedOutput, type Violation } from './invariants';

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
  /** The typed reason for the hop block, when the route gives one. */
  handoff?: HandoffReason;
  maxHops: number;
  countAtLastHumanDecision?: number;
  /** Used on acks of packages too broken to carry a trace. */
  fallbackTraceparent: string;
  fallbackJobId: string;
  /** What the job's other running hops hold reserved from the wallet (a fan-out's branches),
   * asked when the hop is acked: a hop admitted meanwhile is counted however the shell awaits. */
  heldUsd?: () => number;
  /** Handed to the stage beside the package (StageWork.hook_results); only the job's rail sets them. */
  hookResults?: HookResult[];
  /** URIs and hashes of the outputs stages moved off the job's package (the job keeps them):
   * a revision must differ from those too (`no_artifact_reuse`). */
  earlierOutputs?: ReadonlySet<string>;
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
  /** Why the stage may not take the package, or null (asked once per hop). */
  role: string | null;
  /** A well-formed package for the right stage: only such a delivery is worth a duplicate lookup. */
  deliverable: boolean;
}

export function admitHop(r: HopRequest): Admission {
  // A name that is not a stage slug cannot be registered; it is acked (rejected_role) under a
  // placeholder so the ack itself stays a valid record.
  const named = typeof r.stage === 'string' && isSlug(r.stage);
  const stage = named ? r.stage : 'unknown-stage';
  // Whatever arrived as the name is described, never converted (an object's toString may throw).
  const asked =
    typeof r.stage === 'string'
      ? JSON.stringify(r.stage.slice(0, 40))
      : `a ${r.stage === null ? 'null' : typeof r.stage}`;
  const reason = named ? r.reason : `${r.reason} (asked for ${asked})`;
  const card = r.pipeline.get(stage);
  const validation = validateHandoff(r.package, {
    accept: card?.packageVersions ?? [HANDOFF_V1],
    registry: r.pipeline.versions,
  });
  const arrived = validation.ok ? validation.value : undefined;
  const hop = nextHop(arrived?.hop, stage, reason, r.from, r.handoff);
  const jobId = arrived?.job_id ?? r.fallbackJobId;
  const role = card && arrived ? roleMismatch(card, arrived) : null;
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
    role,
    deliverable: arrived !== undefined && card !== undefined && role === null,
  };
}

/** The ack: decideAck over the admission (ordered checks: contracts/README, workflows/rail/ack.ts). */
export function decideHop(
  a: Admission,
  r: Pick<HopRequest, 'pipeline' | 'maxHops' | 'countAtLastHumanDecision' | 'heldUsd'>,
  prior: Pick<StageResult, 'recorded_by_other'> | null,
): AckDecision {
  return decideAck({
    stage: a.stage,
    card: a.card,
    validation: a.validation,
    role: a.role,
    hop: a.hop,
    maxHops: r.maxHops,
    revisits: r.pipeline.revisits,
    countAtLastHumanDecision: r.countAtLastHumanDecision,
    alreadyDelivered: prior !== null,
    otherPackage: prior?.recorded_by_other === 'different',
    heldUsd: r.heldUsd?.(),
  });
}

export interface Settlement {
  /** What the wallet is charged: the reported cost when it is a real amount (at most the hop's
   * reservation, once reservations settle), else nothing. */
  costUsd: number;
  /** What the stage reported beyond what it was charged. */
  overspentUsd: number;
  /** The delivered package with the wallet charged. */
  charged: HandoffV1;
  /** The emitted package (validated) with the wallet charged, when it is valid. */
  emitted: HandoffV1 | undefined;
  violations: Violation[];
}

/**
 * After the stage ran: charge the wallet and check what it emitted against every invariant.
 * `reservedUsd`: the hop's reservation, when a report above it is settled at it (the rest is the
 * hop's overspend); otherwise the whole report is charged, down to an empty wallet.
 */
export function settleHop(
  pipeline: Pipeline,
  delivered: HandoffV1,
  result: StageResult,
  card: StageCard,
  reservedUsd?: number,
  checks: Pick<EmittedOutput, 'foldSnapshot' | 'earlierOutputs'> = {},
): Settlement {
  // A cost that is not a number is a violation (checkEmitted); the wallet is charged nothing for it.
  const reported = reportedUsd(result.cost_usd);
  const { settledUsd: capped, overspentUsd: beyondReservation } =
    reservedUsd === undefined ? { settledUsd: reported, overspentUsd: 0 } : settle(reservedUsd, reported);
  // The wallet pays at most what it holds: what it was charged is what the job spent.
  const { budget, overspentUsd: beyondWallet, chargedUsd: costUsd } = charge(delivered.budget, capped);
  const overspentUsd = beyondReservation + beyondWallet;
  const emitted = validateHandoff(result.package, { accept: card.packageVersions, registry: pipeline.versions });
  const violations = emitted.ok
    ? checkEmitted({
        delivered,
        emitted: emitted.value,
        artifact: result.artifact,
        body: result.body,
        costUsd: result.cost_usd,
        card,
        ...checks,
      })
    : [
        {
          invariant: 'emitted_schema_valid',
          reason: `the emitted package fails ${card.packageVersions.join(' | ')}: ${emitted.errors.map((e) => `${e.path} ${e.message}`).join('; ')}`,
        },
      ];
  // The rail's own hop block goes on: a stage may echo one from before typed reasons (invariants.ts).
  return {
    costUsd,
    overspentUsd,
    charged: { ...delivered, budget },
    emitted: emitted.ok ? { ...emitted.value, ...(delivered.hop ? { hop: delivered.hop } : {}), budget } : undefined,
    violations,
  };
}

/** The ack of a decision on this hop (the stage a rejected_invariant names may be the fallback). */
export function stampAck(
  a: Admission,
  r: Pick<HopRequest, 'actor'>,
  decision: AckDecision,
  now: Date,
  stage = a.stage,
): AckRecord {
  return ackRecord(decision, {
    stage,
    hop: a.hop,
    deliveryKey: a.key,
    traceparent: a.traceparent,
    now,
    actor: r.actor,
  });
}

/** The package the stage receives: what arrived, with the rail's hop and ack on it. */
export function deliveredPackage(a: Admission & { arrived: HandoffV1 }, ack: AckRecord): HandoffV1 {
  return { ...a.arrived, hop: a.hop, ack };
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
  /** The type of the stage's typed failure (an ApplicationFailure's), when it threw one: read from
   * the failure itself, never from its message, which the stage wrote. */
  failureType?: string;
  /** The tool call the stage's loop stopped at for a human (ToolApprovalRequired), as the rail
   * names it: its digest computed by the rail over the call it shows. */
  toolCall?: ToolCallAwaiting;
  /** Which stage actually did the work (differs when the fallback stage answered). */
  stage: string;
  costUsd: number;
  overspentUsd: number;
  /** The snapshot of a hop no stage answered (refused, a duplicate the rail looked up, or the
   * stage failed), or one the rail found missing from the store when the package pointed at it: no
   * worker may have stored it, so the rail keeps it and answers the `snapshot` query with it. */
  unstoredSnapshot?: Snapshot;
}

/** What the stage activity answered: a result (from `card`, the fallback when it answered) or why
 * it failed (`failureType`: the stage failure's type, when it threw a typed one). */
/** What the stage answered. `snapshot`: the address of the package as delivered (its
 * `context_ref`), behind which the stage may have folded its artifacts. */
export type StageAnswer =
  | { result: StageResult; card: StageCard; snapshot?: string }
  | { failure: string; failureType?: string; toolCall?: ToolCallAwaiting };

/** The stage refused the hop before any work because the edge's handover is over its token cap:
 * a refusal of the hop itself, acked like an unaffordable one. */
export const CONTEXT_BUDGET_FAILURE = 'ContextBudgetExceeded';
/** The named reason such a refusal's ack starts with. */
export const CONTEXT_BUDGET_REASON = 'context_budget_exceeded';
/** No worker picked the hop up, after its retry and its fallback (the shell's own failure type):
 * the package returns to its sender with a `target_unavailable` ack. */
export const TARGET_UNAVAILABLE = 'TargetUnavailable';

/** A rejected package's own traceparent, when it carries a valid one: the ack of a refused hop
 * still belongs to the sender's trace: the same traceparent on A's emit and B's ack. */
function carriedTrace(pkg: unknown): string | undefined {
  const candidate = (pkg as { trace?: { traceparent?: unknown } } | null)?.trace?.traceparent;
  return typeof candidate === 'string' && isValidTraceparent(candidate) ? candidate : undefined;
}
