/**
 * The same change as timer-first.ts, made safely: behind `patched()` the timer runs only in
 * executions that start on this code; recorded executions replay down the old path.
 */
import { patched, sleep } from '@temporalio/workflow';
import type { CarriedJob, JobRequest, JobResult } from '../../../contracts';
import { handoffJob as currentHandoffJob, stageHop as currentStageHop } from '../../../workflows';
import type { StageHopRequest, StageHopResult } from '../../../workflows/stage-hop';

const PATCH = 'timer-first';

export async function handoffJob(request: JobRequest, carried?: CarriedJob): Promise<JobResult> {
  if (patched(PATCH)) await sleep('1 second');
  return currentHandoffJob(request, carried);
}

export async function stageHop(request: StageHopRequest): Promise<StageHopResult> {
  if (patched(PATCH)) await sleep('1 second');
  return currentStageHop(request);
}
