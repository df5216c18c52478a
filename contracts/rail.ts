// What workflow code imports from the contracts: their constants, pure helpers, generated
// validators and types. No module here builds a zod schema: the SDK evaluates a workflow bundle's
// modules again for every workflow run, and the zod schemas (./index adds them) were 655 a run.
// Their types come along as types only. test/replay/workflow-bundle.test.ts keeps zod out.
export * from './limits';
export * from './traceparent';
export * from './names';
export * from './stages';
export * from './tool-approval';
export * from './versions';
export * from './validate';
export { clip, refusalLines, toContractErrors } from './errors';
export * as validators from './generated/validators';
export type { StandaloneValidator } from './generated/validators';
export * from './pipeline';
export * from './pipeline-entry';
export { canonicalJson, sameJson } from './canonical-json';
export * from './snapshot';
export * from './fork';
export * from './entry';
export * from './summary';
export * from './earlier-artifacts';
export * from './escalation-record-delta';
export * from './transcript-uri';
export type * from './handoff';
export type * from './artifacts';
export type * from './job';
export type * from './escalation-record';
export type * from './transcript';
