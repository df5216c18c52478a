/**
 * Continue-as-new: a long job (a human sending the work on again and again, a long critique loop)
 * starts a fresh run of itself, under the same job id with the same queries and update, before its
 * history reaches Temporal's limits. It continues only between two steps — the last hop done, the
 * next not begun — so no hop holds a reservation and no escalation is open: what the next run needs
 * is the package (its wallet), what the job has spent, received and acked, and its escalation
 * state (the hop allowance a human's decision granted, who decided last).
 */
import {
  ApplicationFailure,
  allHandlersFinished,
  condition,
  makeContinueAsNewFunc,
  workflowInfo,
} from '@temporalio/workflow';
import {
  LIMITS,
  refusalLines,
  validators,
  type CarriedJob,
  type JobRequest,
  type JobResult,
} from '../../contracts/rail';
import type { Escalations } from './escalation';
import type { JobState } from './state';

/** A run continues past this many history events even when Temporal does not suggest it yet
 * (it warns at 10,240). */
export const DEFAULT_CONTINUE_AFTER_EVENTS = 10_000;
/** Temporal refuses updates past 2,000 per run; the job continues well before. */
export const DEFAULT_CONTINUE_AFTER_UPDATES = 1_000;

/** Whether this run should hand the job to a new one now. */
export function continueDue(limits: JobRequest['continue_after'], decisionsTaken: number): boolean {
  const info = workflowInfo();
  return (
    info.continueAsNewSuggested ||
    info.historyLength >= (limits?.events ?? DEFAULT_CONTINUE_AFTER_EVENTS) ||
    decisionsTaken >= (limits?.updates ?? DEFAULT_CONTINUE_AFTER_UPDATES)
  );
}

/** Hands the job to a new run: once every handler has finished, with the same request and the
 * job's state as its second input, and the search attributes as they stand. */
export async function continueJob(request: JobRequest, job: JobState, humans: Escalations): Promise<never> {
  await condition(allHandlersFinished);
  const next = makeContinueAsNewFunc<(request: JobRequest, carried: CarriedJob) => Promise<JobResult>>({
    typedSearchAttributes: workflowInfo().typedSearchAttributes,
  });
  return await next(request, carry(job, humans));
}

/** The job's state for the next run: the newest acks (the rest counted by kind) and handovers. */
export function carry(job: JobState, humans: Escalations): CarriedJob {
  const { acks, earlier } = job.keptAcks();
  return {
    runs: job.runs,
    package: job.package,
    stage: job.stage,
    traceparent: job.settings.traceparent,
    bodies: job.bodies,
    spent_usd: job.spentUsd,
    overspent_usd: job.overspentUsd,
    ...(job.receipt ? { receipt: job.receipt } : {}),
    acks,
    earlier_acks: earlier,
    handovers: job.handovers.slice(-LIMITS.acks),
    snapshots: [...job.snapshots].map(([uri, content]) => ({ uri, content })),
    last_actor: job.lastActor,
    count_at_last_human_decision: job.countAtLastHumanDecision,
    escalations: humans.records.count,
    ...(job.movedOutputs.size > 0 ? { moved_outputs: [...job.movedOutputs] } : {}),
  };
}

/** The state an earlier run handed on, checked like any input: well-formed, this job's, and
 * sent with the job's own trace; otherwise the run fails at once, naming what is wrong. */
export function acceptCarried(carried: unknown, request: JobRequest): CarriedJob | undefined {
  if (carried === undefined || carried === null) return undefined;
  const refuse = (why: string) =>
    ApplicationFailure.nonRetryable(`invalid carried job state: ${why}`, 'InvalidCarriedJob');
  if (!validators.carriedJob(carried))
    throw refuse(refusalLines(validators.carriedJob.errors, 'carried', 5).join('; '));
  const own = workflowInfo().workflowId;
  if (carried.package.job_id !== own) throw refuse(`its package is job ${carried.package.job_id}'s, not ${own}'s`);
  if (request.traceparent !== undefined && request.traceparent !== carried.traceparent)
    throw refuse("its traceparent is not the request's");
  return carried;
}
