// The hub bench's workflow module: the rail over its one pipeline.
import { createRail } from '../../workflows/create-rail';
import { hubBench } from './pipeline';

export const { handoffJob, stageHop } = createRail([hubBench]);
