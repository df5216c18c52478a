// The workflow bundle's entry: every workflow type the worker registers (SPEC "Public surface").
export { handoffJob } from './handoff-job';
export { stageHop } from './stage-hop';
