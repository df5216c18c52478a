// Everything here must stay importable from Temporal workflow code: no Node built-ins, no I/O.
// The ajv validators are precompiled (contracts/generated), so no ajv compile runs per workflow.
export * from './limits';
export * from './traceparent';
export * from './handoff';
export * from './artifacts';
export * from './job';
export * from './stages';
export * from './versions';
export * from './validate';
export { clip, issueLines, toContractErrors } from './errors';
export { isSlug } from './primitives';
export * as validators from './generated/validators';
export type { StandaloneValidator } from './generated/validators';
export * from './pipeline';
export { canonicalJson } from './canonical-json';
export * from './transcript';
export * from './snapshot';
export * from './entry';
export * from './summary';
export * from './handoff-record';
