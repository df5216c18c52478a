/**
 * A job id started again after its job completed (the reuse policy of `temporal workflow start`
 * and the SDKs allows a second run; handrail's own client refuses one): the new run's first hop
 * finds the first run's result under its delivery key, another package's. The run then answers
 * with the first run's result and shows it, so the job never reads as rejected; a conflict with
 * no completed run behind it ends the job rejected, as before.
 */
import { workflowInfo } from '@temporalio/workflow';
import { validators, type JobResult } from '../../contracts/rail';
import { earlierJobResult } from '../activities';
import type { JobState } from './state';

/** The earlier run's result when this run is a second start of a completed job, else undefined.
 * Asked only when the conflict came before this run's first accepted hop. */
export async function earlierResult(job: JobState): Promise<JobResult | undefined> {
  if (job.runs > 1 || job.acks.some((a) => a.ack === 'accepted')) return undefined;
  const earlier = await earlierJobResult({ job_id: job.jobId, run_id: workflowInfo().runId });
  return earlier !== null && validators.jobResult(earlier) && earlier.job_id === job.jobId ? earlier : undefined;
}

/** This run shows the earlier run's ending (status, stage, wallet, acks) and answers with it. */
export function answerAsEarlier(job: JobState, earlier: JobResult): JobResult {
  job.package = earlier.package;
  job.acks.splice(0, job.acks.length, ...earlier.acks);
  job.spentUsd = earlier.spent_usd;
  job.overspentUsd = earlier.overspent_usd ?? 0;
  job.receipt = earlier.receipt;
  job.stage = earlier.acks.at(-1)?.stage ?? job.stage;
  job.status = earlier.status;
  job.reason = earlier.reason;
  job.publish();
  return earlier;
}
