// The worker's workflow module: the rail over this project's pipelines. Temporal bundles this file
// into its sandbox, so it imports only the sandbox-safe `handrail/workflow` and the pure pipelines.
import { createRail } from 'handrail/workflow';
import { pipelines } from './pipeline.js';

export const { handoffJob, stageHop } = createRail(pipelines);
