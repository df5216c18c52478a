// Everything here must stay importable from Temporal workflow code: no Node built-ins, no I/O.
// The ajv validators are precompiled (contracts/generated), so no ajv compile runs per workflow.
// Workflow code imports ./rail (all of this but the zod schemas); this adds the schemas.
export * from './rail';
export * from './handoff';
export * from './artifacts';
export * from './job';
export * from './transcript';
export * from './escalation-record';
export { issueLines } from './errors';
// Zod building blocks for artifact schemas: bounded text, ids, slugs, hashes, times, lists.
export * from './primitives';
