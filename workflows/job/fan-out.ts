/**
 * A fan-out and its merge: every specialist not yet answered gets the hub's package at once, each
 * hop with its own reservation; when all answered the rail merges their artifacts into one,
 * recorded once under `job_id:merge:<type>`.
 */
import { isCancellation } from '@temporalio/workflow';
import { LIMITS, MERGE_STAGE, type AckRecord, type StageResult } from '../../contracts/rail';
import { mergeBranches } from '../activities';
import { describeFailure } from '../run-hop';
import { ackRecord } from '../rail/ack';
import { charge } from '../rail/budget';
import {
  branchFailure,
  branchesHop,
  branchSegments,
  failedBranch,
  inFanOutOrder,
  mergeHop,
  mergeKey,
  mergedBody,
  mergedPackage,
} from '../rail/merge';
import { fanOutStage, type Branch, type FanOutStep, type HopStep, type Route } from '../rail/routing';
import { traceHop } from '../tracing';
import { deliver } from './reserved-hop';
import type { JobState } from './state';

/** A fan-out that ends the job: another package's result under one of its keys (rejected). */
export interface Ended {
  kind: 'ended';
  reason: string;
}

/**
 * Runs the branches not yet answered (admitted one after another, so each sees the others'
 * reservations), then merges. A branch refused or failed escalates the job with the branch named,
 * and the branches that answered are kept for the retry.
 */
export async function fanOut(job: JobState, step: FanOutStep): Promise<Route | Ended> {
  const pending = step.rule.fanOut.filter((stage) => !step.done.some((b) => b.stage === stage));
  job.stage = fanOutStage(pending);
  // A retried fan-out with every branch answered goes straight to its merge, which publishes.
  if (pending.length > 0) job.publish();
  const settled = await Promise.allSettled(pending.map((stage) => branch(job, step, stage)));
  // Every branch has ended (a cancelled job cancels them all) before the job moves on.
  const crashed = settled.find((s) => s.status === 'rejected');
  if (crashed) throw crashed.reason;
  const ran = settled.map((s) => (s as PromiseFulfilledResult<Branch>).value);
  const answered = [...step.done, ...ran.filter((b) => b.outcome.ok)];
  const failed = failedBranch(step.rule, ran);
  const hub = step.hub ?? step.package.hop;
  if (failed) {
    const ack = failed.outcome.acks[failed.outcome.acks.length - 1];
    const after = branchesHop(
      hub,
      job.package.hop,
      inFanOutOrder(step.rule, answered).map((b) => b.stage),
    );
    const retry = { ...step, done: answered, ...(hub ? { hub } : {}) };
    return {
      kind: 'escalate',
      reason: branchFailure(step.rule, failed),
      resume: failed.stage,
      retry,
      ...(ack ? { ack } : {}),
      ...(after ? { after } : {}),
    };
  }
  // A branch whose delivery key already holds another package's result ends the job, as a serial hop's does.
  const conflict = ran.flatMap((b) => b.outcome.acks).find((a) => a.ack === 'rejected_conflict');
  if (conflict) return { kind: 'ended', reason: conflict.reason };
  return (await merge(job, { ...step, ...(hub ? { hub } : {}) }, answered)) ?? job.route();
}

/** One branch: the hub's package to one specialist, paid from the hub's wallet. */
async function branch(job: JobState, step: FanOutStep, stage: string): Promise<Branch> {
  const hop: HopStep = {
    kind: 'hop',
    to: stage,
    reason: step.reason,
    handoff: step.rule.handoff ?? 'specialization',
    package: step.package,
    ...(step.from ? { from: step.from } : {}),
    ...(step.actor ? { actor: step.actor } : {}),
    ...(step.hooks ? { hooks: step.hooks } : {}),
  };
  // Each branch's acks take the place of its admission ack, so they read in fan-out order
  // however the branches finish (and the acks query shows a branch at work).
  let admitted: AckRecord | undefined;
  const outcome = await deliver(job, hop, (ack) => job.acks.push((admitted = ack)));
  // The branch's own package (its summary segment included) stays the branch's until the merge.
  job.package = { ...job.package, budget: charge(job.package.budget, outcome.costUsd).budget };
  job.record(outcome, admitted);
  // A branch ends in a workflow task of its own: no step starts in it to publish.
  if (admitted) job.publish();
  return { stage, outcome };
}

/**
 * Joins the branches' artifacts into one, recorded once under `job_id:merge:<type>`. A merge
 * that cannot be recorded escalates (every branch kept, so a retry only merges); one recorded
 * from another package under this job's key is a conflict, like a serial hop's.
 */
async function merge(job: JobState, step: FanOutStep, branches: readonly Branch[]): Promise<Route | Ended | undefined> {
  const startedAt = Date.now();
  job.stage = MERGE_STAGE;
  job.publish();
  const hop = mergeHop(step.hub ?? job.package.hop, step.rule, job.package.hop);
  const traceMerge = (acks: AckRecord[], failure?: string) => traceMergeStep(job, step, hop, startedAt, acks, failure);
  const key = mergeKey(job.jobId, step.rule);
  const acked = (ack: AckRecord['ack'], reason: string) =>
    ackRecord(
      { ack, reason },
      { stage: MERGE_STAGE, hop, deliveryKey: key, traceparent: job.settings.traceparent, now: new Date() },
    );
  const parts = branches.map((b) => `${b.stage} (${b.outcome.result!.artifact.type})`).join(', ');
  const ack = acked('accepted', `merging ${parts} into ${step.rule.merge}`);
  const pkg = mergedPackage(job.package, step.rule, branches, hop, ack);
  const work = {
    key,
    type: step.rule.merge,
    body: mergedBody(step.rule, branches),
    package: pkg,
    segments: branchSegments(job.package, step.rule, branches),
  };
  let result: StageResult;
  try {
    result = await mergeBranches({
      ...work,
      branches: branches.map((b) => ({ memory_refs: b.outcome.result!.package.memory_refs })),
    });
  } catch (err) {
    if (isCancellation(err)) throw err;
    const failure = `merge into ${step.rule.merge} failed: ${describeFailure(err)}`.slice(0, LIMITS.shortText);
    traceMerge([ack], failure);
    return { kind: 'escalate', reason: failure, resume: MERGE_STAGE, retry: { ...step, done: branches } };
  }
  if (result.recorded_by_other === 'different') {
    const conflict = acked(
      'rejected_conflict',
      `another package was already merged into ${step.rule.merge} for this job; its merge is not this one's`,
    );
    job.acks.push(conflict);
    traceMerge([conflict]);
    return { kind: 'ended', reason: conflict.reason };
  }
  // The same merge recorded earlier (a second run) answers with the recorded artifact.
  const final = result.recorded_by_other
    ? acked('duplicate', `${step.rule.merge} already merged for this job; returning the recorded artifact`)
    : ack;
  // Summary and log ref are the merge's, as recorded: the hub's with the branches' segments
  // appended and their turns joined by the activity.
  const { summary, memory_refs } = result.package;
  job.package = {
    ...pkg,
    ...(summary !== undefined ? { summary } : {}),
    memory_refs,
    artifacts: [...pkg.artifacts, result.artifact],
    ack: final,
  };
  if (result.body && typeof result.body === 'object')
    job.bodies[step.rule.merge] = result.body as Record<string, unknown>;
  job.acks.push(final);
  traceMerge([final]);
  return undefined;
}

/** The merge is a step of the job's trace like a hop: a span from the branches' join to its record. */
function traceMergeStep(
  job: JobState,
  step: FanOutStep,
  hop: ReturnType<typeof mergeHop>,
  startedAt: number,
  acks: AckRecord[],
  failure?: string,
): void {
  traceHop({
    job_id: job.jobId,
    stage: MERGE_STAGE,
    from: hop.from,
    reason: step.rule.reason,
    traceparent: job.settings.traceparent,
    started_at: startedAt,
    ended_at: Date.now(),
    acks,
    cost_usd: 0,
    ...(failure ? { failure } : {}),
  });
}
