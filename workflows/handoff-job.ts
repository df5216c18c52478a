/**
 * `handoffJob`: one job's relay through its pipeline's stages, owned by deterministic code.
 * Every hop is acked before work, one wallet pays for all of them, the judge can send a draft
 * back while revisions remain, and anything the rail refuses goes to a human, whose decision is
 * one more typed hop. The routing table, stages and revisits come from the job's pipeline.
 *
 * The job reads as its process: take the request, then step until the route says the job is
 * complete — a hop to a stage, a fan-out and its merge, or an escalation to a human — and finish.
 */
import { CancellationScope, allHandlersFinished, condition, isCancellation, workflowInfo } from '@temporalio/workflow';
import type { CarriedJob, JobRequest, JobResult, JobStatus } from '../contracts/rail';
import { returnToSender, type Route } from './rail/routing';
import { jobStart } from './rail/first-package';
import { acceptCarried, continueDue, continueJob } from './job/continue-as-new';
import { Escalations } from './job/escalation';
import { fanOut } from './job/fan-out';
import { acceptFork, beginFork, type ForkStart } from './job/fork';
import { hop } from './job/reserved-hop';
import { answerQueries } from './job/queries';
import { answerAsEarlier, earlierResult } from './job/started-again';
import { acceptRequest, jobSettings, type RailPipelines } from './job/request';
import { JobState } from './job/state';

/** The `handoffJob` workflow for these pipelines: a job names one in `pipeline` (the first by
 * default). `carried`: what the job's previous run handed on when it continued as new. */
export function createHandoffJob(
  rail: RailPipelines,
): (request: JobRequest, carried?: CarriedJob) => Promise<JobResult> {
  return async function handoffJob(input: JobRequest, carriedInput?: CarriedJob): Promise<JobResult> {
    const { request, pipeline } = acceptRequest(rail, input);
    const carried = acceptCarried(carriedInput, request);
    const settings = jobSettings(request, carried?.traceparent);
    // A run continued as new carries its job on: a fork begins once, in its first run.
    const fork = carried ? undefined : acceptFork(request, pipeline, workflowInfo().workflowId, settings.traceparent);
    const job = new JobState(
      settings,
      pipeline,
      rail.stages.get(pipeline.name)!,
      fork ? { package: fork.parent, stage: fork.parent.hop!.to } : jobStart(request, pipeline, settings.traceparent),
      carried,
    );
    answerQueries(job);
    return await runJob(request, job, new Escalations(job, carried?.escalations), fork);
  };
}

async function runJob(request: JobRequest, job: JobState, humans: Escalations, fork?: ForkStart): Promise<JobResult> {
  const finish = (status: JobStatus, reason: string) => finishJob(job, humans, status, reason);
  try {
    let step: Route | { kind: 'refused'; reason: string } = fork ? await beginFork(job, fork) : job.route();
    if (step.kind === 'refused') return await finish('rejected', step.reason);
    for (;;) {
      switch (step.kind) {
        case 'complete':
          return await finish('completed', step.reason);
        case 'escalate': {
          const next = await humans.escalate(step);
          if (next === 'timeout')
            return await finish('escalated', `no decision within ${job.settings.decisionTimeout}: ${step.reason}`);
          if (next === 'rejected') return await finish('rejected', `rejected by ${job.lastActor}`);
          step = next;
          break;
        }
        case 'fanout': {
          const next = await fanOut(job, step);
          if (next.kind === 'ended') return await finish('rejected', next.reason);
          step = next;
          break;
        }
        case 'hop': {
          const outcome = await hop(job, step);
          // The job id's evidence belongs to another package: no human decision can make it this
          // job's, so the job ends here — as the earlier run did, when that is a completed job
          // started again.
          const conflict = outcome.acks.find((a) => a.ack === 'rejected_conflict');
          if (conflict) {
            const earlier = await earlierResult(job);
            return earlier ? answerAsEarlier(job, earlier) : await finish('rejected', conflict.reason);
          }
          const reason = outcome.failure ?? outcome.acks[outcome.acks.length - 1]!.reason;
          if (outcome.ok) {
            // Between two steps, nothing held or open: where a long job hands on to a new run.
            if (continueDue(job.settings.continueAfter, humans.decisions.handled))
              return await continueJob(request, job, humans);
            step = job.route();
          } else if (outcome.acks.some((a) => a.ack === 'target_unavailable'))
            step = returnToSender(job.pipeline, job.package, step, reason);
          else
            step = {
              kind: 'escalate',
              reason,
              resume: step.to,
              retry: step,
              ...(outcome.toolCall ? { tool_call: outcome.toolCall } : {}),
            };
        }
      }
    }
  } catch (err) {
    if (isCancellation(err))
      return await CancellationScope.nonCancellable(() => finish('cancelled', 'cancelled by an operator'));
    throw err;
  }
}

/** Ends the job: closes an open escalation's record, waits for running handlers, publishes. */
async function finishJob(job: JobState, humans: Escalations, status: JobStatus, reason: string): Promise<JobResult> {
  // No decision is taken from here on (the validator refuses without an escalation), so none
  // can be acknowledged while the record closes and then be dropped.
  job.escalation = undefined;
  // Only a job waiting on a human holds an open record: it timed out or was cancelled.
  // Awaited only when there is a record to close: a workflow promise costs a stack trace (runHop).
  if (humans.records.openId !== undefined)
    await humans.records.close(status === 'cancelled' ? 'job_cancelled' : 'timed_out');
  // Handlers still running are awaited, and in a cancelled scope the wait throws and the job ends
  // cancelled; otherwise nothing is awaited. The wait comes before publishing, so a job cancelled
  // during its write publishes `cancelled` alone, never `completed` first.
  if (!allHandlersFinished() || CancellationScope.current().consideredCancelled) await condition(allHandlersFinished);
  job.status = status;
  job.reason = reason;
  job.publish();
  return job.result(status, reason);
}
