// The workflow bundle of the shipped worker (`npm run worker`, the demo, the tests): the rail
// over the built-in pipelines, the reference one first (the default when a job names none).
// Public workflow types, names other tools depend on: `handoffJob`, `stageHop`.
import { BUILT_IN_PIPELINES } from '../contracts/pipelines';
import { createRail } from './create-rail';

export const { handoffJob, stageHop } = createRail(BUILT_IN_PIPELINES);
