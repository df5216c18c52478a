// The long-job bench's workflow module: the rail over the reference pipeline and the long relay.
import { createRail } from '../../workflows/create-rail';
import { LONG_JOB_PIPELINES } from './pipeline';

export const { handoffJob, stageHop } = createRail([...LONG_JOB_PIPELINES]);
