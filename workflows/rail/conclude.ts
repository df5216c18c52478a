/**
 * How a hop ends, pure: from its ack and what the shell gathered (the prior result, the stage's
 * answer, the rail's own lookup), the hop's acks, package and charge.
 */
import {
  failureCode,
  parseSnapshotUri,
  reservationUsd,
  validateHandoff,
  type AckRecord,
  type HandoffV1,
  type StageCard,
  type StageResult,
} from '../../contracts/rail';
import type { AckDecision } from './ack';
import { reportedUsd, settle } from './budget';
import { checkEmitted, type Violation } from './invariants';
import {
  CONTEXT_BUDGET_FAILURE,
  CONTEXT_BUDGET_REASON,
  TARGET_UNAVAILABLE,
  decideHop,
  deliveredPackage,
  settleHop,
  stampAck,
  type Admission,
  type HopOutcome,
  type HopRequest,
  type Settlement,
  type StageAnswer,
} from './hop-decisions';

const failureCodes = (failures: readonly string[]) => [...new Set(failures.map(failureCode))].sort();

/**
 * Why this hop made no progress, or undefined: its output repeats an earlier artifact (the only
 * invariant it broke), or the critic failed the work for exactly the reasons it gave last time.
 * Users of other frameworks watch agents hand the same work back and forth until the bill
 * arrives; the rail stops the loop at the second identical verdict, before the hop cap.
 */
export function noProgress(delivered: HandoffV1, settled: Settlement, card: StageCard): string | undefined {
  const { violations, emitted } = settled;
  if (violations.length > 0)
    return violations.every((v) => v.invariant === 'no_artifact_reuse') ? violations[0]!.reason : undefined;
  if (card.role !== 'critic' || !emitted) return undefined;
  const [before, after] = [delivered.evaluator, emitted.evaluator];
  if (before.last_verdict !== 'fail' || after.last_verdict !== 'fail' || after.failures.length === 0) return undefined;
  const codes = failureCodes(after.failures);
  return codes.join() === failureCodes(before.failures).join()
    ? `"${card.name}" failed the work for the same reasons twice in a row: ${codes.join(', ')}`
    : undefined;
}

/** The invariant a stage breaks when it folds the package it emits behind the snapshot of its
 * delivery and the store does not hold that snapshot (the rail's `snapshotHeld` looked). */
export const FOLD_SNAPSHOT_INVARIANT = 'fold_snapshot_stored';

/** The invariant a stage breaks when it answers that another delivery recorded this one and the
 * rail's own lookup of the delivery key finds no such record. */
export const DUPLICATE_CLAIM_INVARIANT = 'duplicate_claim_verified';

/** Whether the stage answered that another delivery already recorded this one: a claim the rail
 * believes only from its own lookup (the shell looks the key up then, and only then). */
export function claimsRecorded(answer: StageAnswer): boolean {
  return 'result' in answer && answer.result.recorded_by_other !== undefined;
}

/**
 * The hop's outcome, from its ack and what the shell gathered: the prior result the duplicate
 * lookup found, and — when the hop was accepted and the stage ran — its answer, with the rail's
 * own lookup when the answer claims another delivery recorded this one (`recorded`: what the
 * lookup found, null or absent when nothing). A verified claim is decided again (duplicate or
 * rejected_conflict), a false one is `rejected_invariant`; otherwise the output is settled, a hop
 * that made no progress becomes a `no_progress` ack, and any broken invariant a
 * `rejected_invariant` ack. A recorded result answered as a duplicate is checked too.
 * `unheldFold`: why the snapshot of this delivery is not in the store, when the shell looked
 * (`foldsBehind`) and it is not: a package folded behind it then breaks `fold_snapshot_stored`.
 */
export function concludeHop(
  a: Admission,
  r: Pick<HopRequest, 'pipeline' | 'maxHops' | 'countAtLastHumanDecision' | 'actor' | 'earlierOutputs'>,
  ack: AckRecord,
  now: Date,
  prior: StageResult | null,
  answer?: StageAnswer,
  recorded?: StageResult | null,
  unheldFold?: string,
): HopOutcome {
  const free = { costUsd: 0, overspentUsd: 0 };
  const refused = (extra: Partial<HopOutcome> = {}): HopOutcome => ({
    acks: [ack],
    package: a.arrived && { ...a.arrived, ack },
    ok: false,
    stage: a.stage,
    ...free,
    ...extra,
  });
  if (ack.ack === 'duplicate' && prior) return answerFromRecord(a, r, ack, prior, now);
  if (ack.ack !== 'accepted' || !a.arrived || !a.card || !answer) return refused();
  const delivered = deliveredPackage({ ...a, arrived: a.arrived }, ack);
  // The rail's record of an accepted hop's ack carries its reservation and what it settled; the
  // package's ack stays what the stage saw before its work.
  const reservedUsd = reservationUsd(a.card);
  const booked = (settledUsd: number): AckRecord => ({ ...ack, reserved_usd: reservedUsd, settled_usd: settledUsd });
  if ('failure' in answer) {
    const failed = {
      failure: answer.failure,
      ...(answer.failureType ? { failureType: answer.failureType } : {}),
      ...(answer.toolCall ? { toolCall: answer.toolCall } : {}),
    };
    const second = failureAck(answer);
    if (!second) return refused({ acks: [booked(0)], ...failed, package: delivered });
    const refusal = stampAck(a, r, second, now);
    return refused({ acks: [booked(0), refusal], ...failed, package: { ...delivered, ack: refusal } });
  }

  const { result, card } = answer;
  const admitted = { ...a, card: a.card };
  // The stage says another delivery recorded this key (a concurrent twin, a repeat, or a
  // different package): only the rail's own record decides, and its package is checked.
  if (result.recorded_by_other) {
    if (!recorded) {
      const reason = `"${card.name}" answered that another delivery already recorded this one; the rail finds no record under ${a.key}`;
      const rejection = stampAck(
        a,
        r,
        { ack: 'rejected_invariant', invariant: DUPLICATE_CLAIM_INVARIANT, reason },
        now,
        card.name,
      );
      return refused({ acks: [booked(0), rejection], package: { ...delivered, ack: rejection }, stage: card.name });
    }
    const again = stampAck(a, r, decideHop(a, r, recorded), now);
    return again.ack === 'duplicate'
      ? answerFromRecord(a, r, again, recorded, now)
      : refused({ acks: [again], package: { ...a.arrived, ack: again } });
  }
  return settleAnswer(admitted, r, delivered, { result, card, snapshot: answer.snapshot }, booked, now, unheldFold);
}

/** Whether an accepted hop's package is folded behind `snapshot`, the snapshot of its own delivery
 * (the stage moved superseded artifacts off behind it), so that `jobArtifacts` will read it from
 * the store: the shell then asks the store before it takes the package. */
export function foldsBehind(outcome: HopOutcome, snapshot: string): boolean {
  return outcome.ok && outcome.package?.earlier_artifacts?.snapshot === snapshot;
}

/** An answer the stage gave for this delivery, settled: charged, checked for progress and invariants. */
function settleAnswer(
  a: Admission & { card: StageCard },
  r: Pick<HopRequest, 'pipeline' | 'actor' | 'earlierOutputs'>,
  delivered: HandoffV1,
  { result, card, snapshot }: Extract<StageAnswer, { result: StageResult }>,
  booked: (settledUsd: number) => AckRecord,
  now: Date,
  unheldFold?: string,
): HopOutcome {
  const reservedUsd = reservationUsd(a.card);
  // Only a declared worst case caps the charge: a nominal cost is the offline figure, and a real
  // model's report above it is charged in full (down to an empty wallet, the rest overspent).
  const overReservation =
    a.card.worstCaseCostUsd !== undefined && settle(reservedUsd, reportedUsd(result.cost_usd)).overspentUsd > 0;
  const settled = settleHop(r.pipeline, delivered, result, card, overReservation ? reservedUsd : undefined, {
    ...(snapshot !== undefined ? { foldSnapshot: snapshot } : {}),
    ...(r.earlierOutputs ? { earlierOutputs: r.earlierOutputs } : {}),
  });
  // A fold behind a snapshot the store lacks: refused like any broken invariant, so the package
  // goes on as delivered, with nothing pointing at the missing bytes.
  if (unheldFold !== undefined && snapshot !== undefined && settled.emitted?.earlier_artifacts?.snapshot === snapshot)
    settled.violations.push({ invariant: FOLD_SNAPSHOT_INVARIANT, reason: unheldFold });
  const paid = { result, stage: card.name, costUsd: settled.costUsd, overspentUsd: settled.overspentUsd };
  const first = booked(settled.costUsd);
  const stalled = noProgress(delivered, settled, card);
  if (stalled !== undefined) {
    const reuse = settled.violations[0];
    const flag = stampAck(
      a,
      r,
      { ack: 'no_progress', reason: stalled, ...(reuse ? { invariant: reuse.invariant } : {}) },
      now,
      card.name,
    );
    return {
      acks: [first, flag],
      package: { ...settled.charged, ack: flag },
      ok: false,
      failure: `no progress: ${stalled}`,
      ...paid,
    };
  }
  if (settled.violations.length > 0) {
    const rejection = stampAck(
      a,
      r,
      {
        ack: 'rejected_invariant',
        invariant: settled.violations[0]!.invariant,
        reason: settled.violations.map((v) => `${v.invariant}: ${v.reason}`).join('; '),
      },
      now,
      card.name,
    );
    return { acks: [first, rejection], package: { ...settled.charged, ack: rejection }, ok: false, ...paid };
  }
  return { acks: [first], package: settled.emitted ?? settled.charged, ok: true, ...paid };
}

/**
 * A delivery answered from the rail's record of an earlier one (acked `duplicate`, free): the
 * recorded package goes through the same invariants against the package this delivery carried
 * (its hop block and ack are the rail's, as on any answer), so a record that would have been
 * refused as a fresh result is refused as an answer too.
 */
function answerFromRecord(
  a: Admission,
  r: Pick<HopRequest, 'pipeline' | 'actor' | 'earlierOutputs'>,
  ack: AckRecord,
  recorded: StageResult,
  now: Date,
): HopOutcome {
  const answered: HopOutcome = {
    acks: [ack],
    package: { ...recorded.package, ack },
    result: recorded,
    ok: true,
    stage: a.stage,
    costUsd: 0,
    overspentUsd: 0,
  };
  if (!a.arrived || !a.card) return answered;
  const delivered = deliveredPackage({ ...a, arrived: a.arrived }, ack);
  const violations = recordViolations(r, delivered, recorded, a.card);
  if (violations.length === 0) return answered;
  const rejection = stampAck(
    a,
    r,
    {
      ack: 'rejected_invariant',
      invariant: violations[0]!.invariant,
      reason: violations.map((v) => `${v.invariant}: ${v.reason}`).join('; '),
    },
    now,
  );
  return {
    acks: [ack, rejection],
    package: { ...a.arrived, ack: rejection },
    ok: false,
    stage: a.stage,
    costUsd: 0,
    overspentUsd: 0,
  };
}

/** Every invariant a recorded result breaks against `delivered`, the rail's hop block and ack put on it first. */
function recordViolations(
  { pipeline, earlierOutputs }: Pick<HopRequest, 'pipeline' | 'earlierOutputs'>,
  delivered: HandoffV1,
  recorded: StageResult,
  card: StageCard,
): Violation[] {
  const emitted = validateHandoff(recorded.package, { accept: card.packageVersions, registry: pipeline.versions });
  if (!emitted.ok)
    return [
      { invariant: 'emitted_schema_valid', reason: `the recorded package fails ${card.packageVersions.join(' | ')}` },
    ];
  const answered = { ...emitted.value, hop: delivered.hop, ack: delivered.ack };
  // A recorded answer folded behind the snapshot of the delivery that recorded it, which it echoes.
  // The rail cannot tell that address from another snapshot of this job: a forged record can point
  // the fold elsewhere in the job (jobArtifacts then fails closed), never drop what it must keep.
  const own = emitted.value.context_ref;
  return checkEmitted({
    delivered,
    emitted: answered,
    artifact: recorded.artifact,
    body: recorded.body,
    costUsd: recorded.cost_usd,
    card,
    ...(own !== undefined && parseSnapshotUri(own)?.jobId === delivered.job_id ? { foldSnapshot: own } : {}),
    ...(earlierOutputs ? { earlierOutputs } : {}),
  });
}

/** The second ack a stage's typed failure earns on its own, if any: a handover over its token
 * cap is a refusal for budget; a stage no worker picked up returns the package to its sender. */
function failureAck(answer: { failure: string; failureType?: string }): AckDecision | undefined {
  if (answer.failureType === CONTEXT_BUDGET_FAILURE)
    return { ack: 'rejected_budget', reason: `${CONTEXT_BUDGET_REASON}: ${answer.failure}` };
  if (answer.failureType === TARGET_UNAVAILABLE) return { ack: 'target_unavailable', reason: answer.failure };
  return undefined;
}
