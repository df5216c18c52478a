/**
 * The ACK: the rail decides every hop before any stage work, so a
 * stage never starts on a package it should not take. Pure: the workflow gathers the facts, this decides.
 *
 * Order matters and is part of the contract:
 *   1. rejected_schema   the package fails handoff.v1 (or names an unknown/retired version)
 *   2. rejected_role     the stage is unknown or does not take the newest artifact's type;
 *      rejected_invariant (writeback_requires_pass) the writer and the last verdict is not `pass`
 *   3. rejected_conflict a different package was already delivered under this key: refused, never its result
 *      duplicate         this delivery already completed: the prior artifact is returned, free
 *   4. max_hops_exceeded the transfer is past the job's cap
 *   5. cycle_detected    the transfer revisits a stage without a planned edge
 *   6. rejected_budget   the wallet, less what running hops reserved, cannot hold the stage's
 *                        reservation (its worst-case cost)
 *   7. accepted
 * Duplicates come before hop and budget checks because answering one costs nothing.
 * After the stage ran, concludeHop (rail/conclude.ts) may add a second ack: `no_progress`,
 * `rejected_invariant`, or `rejected_budget` for a handover over its edge's token cap.
 */
import {
  LIMITS,
  newestArtifact,
  reservationUsd,
  type AckRecord,
  type AckState,
  type ContractError,
  type HandoffValidation,
  type Hop,
  type RevisitEdge,
  type StageCard,
} from '../../contracts/rail';
import { fits } from './budget';
import { exceedsHopCap, isCycle } from './hop-chain';

export interface AckFacts {
  stage: string;
  card: StageCard | undefined;
  validation: HandoffValidation;
  /** Why the stage may not take the package (contracts' roleMismatch), null when it may; the
   * rail computes it once per hop (admitHop), for the ack and for the duplicate lookup. */
  role: string | null;
  /** The hop this delivery would make. */
  hop: Hop;
  maxHops: number;
  /** The pipeline's planned revisit edges (anything else that revisits is a cycle). */
  revisits: readonly Required<RevisitEdge>[];
  /** Hop count when a human last sent work on (fresh allowance); 0 when none did. */
  countAtLastHumanDecision?: number;
  /** A result is already recorded for this delivery key. */
  alreadyDelivered: boolean;
  /** …and it answered a different package (content, not just the key, decides a duplicate). */
  otherPackage?: boolean;
  /** What the job's other running hops (a fan-out's branches) hold reserved from the wallet. */
  heldUsd?: number;
}

export interface AckDecision {
  ack: AckState;
  reason: string;
  errors?: ContractError[];
  invariant?: string;
}

export function decideAck(f: AckFacts): AckDecision {
  if (!f.validation.ok) {
    const what =
      f.validation.reason === 'version'
        ? 'unsupported version'
        : f.validation.reason === 'size'
          ? 'package too large'
          : 'schema invalid';
    return {
      ack: 'rejected_schema',
      reason: `${what}: ${describeErrors(f.validation.errors)}`,
      errors: f.validation.errors,
    };
  }
  const pkg = f.validation.value;
  if (!f.card) return { ack: 'rejected_role', reason: `no stage named "${f.stage}" is registered` };
  if (f.role) return { ack: 'rejected_role', reason: f.role };
  // The writer's gate lives in the rail, not in the writer's mood.
  if (f.card.writes !== null && pkg.evaluator.last_verdict !== 'pass') {
    return {
      ack: 'rejected_invariant',
      invariant: 'writeback_requires_pass',
      reason: `"${f.stage}" writes ${f.card.writes} and runs only behind a passing verdict (last verdict: ${pkg.evaluator.last_verdict})`,
    };
  }
  if (f.alreadyDelivered && f.otherPackage) {
    return {
      ack: 'rejected_conflict',
      reason: `a different package was already delivered to "${f.stage}" under this delivery key; its result is not this one's`,
    };
  }
  if (f.alreadyDelivered)
    return { ack: 'duplicate', reason: `"${f.stage}" already completed this delivery; returning its artifact` };
  if (exceedsHopCap(f.hop, f.maxHops, f.countAtLastHumanDecision)) {
    return { ack: 'max_hops_exceeded', reason: `transfer ${f.hop.count} exceeds the cap of ${f.maxHops} hops` };
  }
  if (isCycle(f.hop, f.revisits)) {
    return {
      ack: 'cycle_detected',
      reason: `${f.hop.from} → ${f.hop.to} revisits "${f.hop.to}" without a planned edge (chain ${f.hop.chain.join(' → ')})`,
    };
  }
  const reserve = reservationUsd(f.card);
  const held = f.heldUsd ?? 0;
  // A serial hop to a card without a worst case reads as it always has (recorded histories
  // carry these reasons on delivered packages); reservations are named where they matter.
  const plain = held === 0 && f.card.worstCaseCostUsd === undefined;
  const wallet = `$${pkg.budget.usd_remaining}${held > 0 ? ` ($${held} reserved by running hops)` : ''}`;
  if (!fits(pkg.budget, held, reserve)) {
    return {
      ack: 'rejected_budget',
      reason: plain
        ? `wallet has $${pkg.budget.usd_remaining}; "${f.stage}" costs $${reserve}`
        : `wallet has ${wallet}; "${f.stage}" reserves $${reserve}`,
    };
  }
  const takes = `schema valid, "${f.stage}" takes ${newestArtifact(pkg)?.type ?? 'the package'}`;
  return {
    ack: 'accepted',
    reason: plain
      ? `${takes}, wallet $${pkg.budget.usd_remaining}`
      : `${takes}, wallet ${wallet}, reserves $${reserve}`,
  };
}

function describeErrors(errors: ContractError[]): string {
  const shown = errors.slice(0, 3).map((e) => `${e.path || '/'} ${e.message}`);
  return shown.join('; ') + (errors.length > 3 ? ` (+${errors.length - 3} more)` : '');
}

export function ackRecord(
  decision: AckDecision,
  at: { stage: string; hop: Hop; deliveryKey: string; traceparent: string; now: Date; actor?: string },
): AckRecord {
  return {
    ack: decision.ack,
    stage: at.stage,
    hop: at.hop.count,
    reason: decision.reason.slice(0, LIMITS.shortText),
    ...(decision.errors ? { errors: decision.errors.slice(0, LIMITS.ackErrors) } : {}),
    ...(decision.invariant ? { invariant: decision.invariant } : {}),
    delivery_key: at.deliveryKey,
    traceparent: at.traceparent,
    at: at.now.toISOString(),
    ...(at.actor ? { actor: at.actor } : {}),
  };
}
