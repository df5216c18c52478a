/**
 * A deliberately non-deterministic change, for the replay suite only: both workflows now start
 * with a one-second timer. Every recorded history begins with other commands, so replay must fail.
 */
import { sleep } from '@temporalio/workflow';
import type { CarriedJob, JobRequest, JobResult } from '../../../contracts';
import { handoffJob as currentHandoffJob, stageHop as currentStageHop } from '../../../workflows';
import type { StageHopRequest, StageHopResult } from '../../../workflows/stage-hop';

export async function handoffJob(request: JobRequest, carried?: CarriedJob): Promise<JobResult> {
  await sleep('1 second');
  return currentHandoffJob(request, carried);
}

export async function stageHop(request: StageHopRequest): Promise<StageHopResult> {
  await sleep('1 second');
  return currentStageHop(request);
}
