/**
 * The same change as timer-last.ts, made safely: behind `patched()` only executions that start on
 * this code wait; recorded executions replay down the old path.
 */
import { patched, sleep } from '@temporalio/workflow';
import type { CarriedJob, JobRequest, JobResult } from '../../../contracts';
import { handoffJob as currentHandoffJob, stageHop as currentStageHop } from '../../../workflows';
import type { StageHopRequest, StageHopResult } from '../../../workflows/stage-hop';

const PATCH = 'timer-last';

export async function handoffJob(request: JobRequest, carried?: CarriedJob): Promise<JobResult> {
  const result = await currentHandoffJob(request, carried);
  if (patched(PATCH)) await sleep('1 second');
  return result;
}

export async function stageHop(request: StageHopRequest): Promise<StageHopResult> {
  const result = await currentStageHop(request);
  if (patched(PATCH)) await sleep('1 second');
  return result;
}
