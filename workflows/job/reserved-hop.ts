/** A job's hops to its stages: each under a reservation of its stage's worst case. */
import { reservationUsd, type AckRecord } from '../../contracts/rail';
import { runHop, type HopOutcome } from '../run-hop';
import type { Reservation } from '../rail/budget';
import { foldArtifacts, type FoldPoint } from '../rail/earlier-artifacts';
import type { HopStep } from '../rail/routing';
import type { JobState } from './state';

/** One hop of the relay: the job moves to the stage, publishes, and takes what the hop acked
 * and its stage emitted. */
export async function hop(job: JobState, step: HopStep): Promise<HopOutcome> {
  job.stage = step.to;
  job.publish();
  const outcome = await deliver(job, step);
  if (outcome.ok && outcome.package) job.rememberMoved(step.package, outcome.package);
  // The stage appended its own summary segment (activities/summary.ts); a refused hop adds none.
  if (outcome.package)
    job.package = outcome.ok ? foldArtifacts(outcome.package, foldPoint(job, outcome)) : outcome.package;
  job.record(outcome);
  return outcome;
}

/** Where the hop's package may fold: after the stage that answered, behind the snapshot its
 * worker stored (a snapshot the rail keeps itself is not in the store to point at). */
function foldPoint(job: JobState, outcome: HopOutcome): FoldPoint {
  const snapshot = outcome.unstoredSnapshot ? undefined : outcome.acks[0]?.snapshot;
  return { card: job.pipeline.get(outcome.stage), storedSnapshot: snapshot };
}

/** Runs a hop under a reservation of its stage's worst case, made the moment the hop is
 * accepted and released however the hop ends. `onAdmitted`: told of the hop's first ack.
 * Not async itself: every workflow promise costs a stack trace (runHop). */
export function deliver(job: JobState, step: HopStep, onAdmitted?: (ack: AckRecord) => void): Promise<HopOutcome> {
  let reservation: Reservation | undefined;
  const card = job.pipeline.get(step.to);
  return runHop(
    {
      pipeline: job.pipeline,
      stage: step.to,
      package: step.package,
      reason: step.reason,
      from: step.from,
      actor: step.actor,
      ...(step.handoff ? { handoff: step.handoff } : {}),
      ...(step.hooks ? { hookResults: step.hooks } : {}),
      maxHops: job.settings.maxHops,
      countAtLastHumanDecision: job.countAtLastHumanDecision,
      fallbackTraceparent: job.settings.traceparent,
      fallbackJobId: job.jobId,
      heldUsd: () => job.reservations.heldUsd,
      earlierOutputs: job.movedOutputs,
    },
    {
      // The rail made every earlier delivery of this job itself: each key is new.
      checkPriorDelivery: false,
      stages: job.stages,
      onAck: (ack) => {
        if (ack.ack === 'accepted' && card)
          reservation = job.reservations.reserve(card.name, ack.hop, reservationUsd(card));
        onAdmitted?.(ack);
      },
      onEnd: () => {
        if (reservation) job.reservations.release(reservation);
      },
      carry: () => job.carried(),
    },
  );
}
