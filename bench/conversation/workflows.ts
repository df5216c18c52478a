// The conversation bench's workflow module: the rail over its one pipeline.
import { createRail } from '../../workflows/create-rail';
import { conversationBench } from './pipeline';

export const { handoffJob, stageHop } = createRail([conversationBench]);
