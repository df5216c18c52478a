/**
 * A non-deterministic change late in a job, for the replay suite only: both workflows wait one
 * second after their work. Every recorded history ends where the code now starts a timer, so
 * replay names the command (StartTimer) and the history's event (the completion) it met.
 */
import { sleep } from '@temporalio/workflow';
import type { CarriedJob, JobRequest, JobResult } from '../../../contracts';
import { handoffJob as currentHandoffJob, stageHop as currentStageHop } from '../../../workflows';
import type { StageHopRequest, StageHopResult } from '../../../workflows/stage-hop';

export async function handoffJob(request: JobRequest, carried?: CarriedJob): Promise<JobResult> {
  const result = await currentHandoffJob(request, carried);
  await sleep('1 second');
  return result;
}

export async function stageHop(request: StageHopRequest): Promise<StageHopResult> {
  const result = await currentStageHop(request);
  await sleep('1 second');
  return result;
}
