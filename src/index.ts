/**
 * handrail's public entry (`import … from 'handrail'`): what a pipeline author and an operator's
 * script import. Three doors, by who runs the code:
 * - `handrail/contracts` (contracts/index.ts): pure — definePipeline, defineStage, the package
 *   contract. Safe in the workflow sandbox; a pipeline definition imports only this.
 * - `handrail/workflows` (workflows/create-rail.ts): createRail, for the worker's workflow module.
 * - `handrail` (this file): all of the contracts plus the worker side (stage helpers, worker
 *   creation), the client side (start, decide, list jobs) and replay (histories against the code).
 */
export * from '../contracts';
export { BUILT_IN_PIPELINES, supportRouting, ticketEntry, ticketHub, ticketTriage } from '../contracts/pipelines';
export * from '../contracts/pipelines/ticket-artifacts';

// Worker side: stage work and the worker.
export { stageActivities, appendUnique, type StageActivity, type StageOptions, type StageOutput, type StageWorkFn } from '../activities/stage';
export { latestArtifact, readArtifactBody, readArtifactText, requireArtifact, writeArtifact } from '../activities/artifacts';
export { stageFailure } from '../activities/failures';
// Seed 004's summary: every segment, read back through the store's references.
export { readSummarySegments, SummaryUnreadableError } from '../activities/summary';
// Handover (seed 000): the tagged log's types and formatTranscript come with the contracts above.
export { applyHandover, fitHandover, materializeTrace, transcriptXml, turnDirFor, ContextBudgetExceeded, HandoverError, type HandoverResult } from '../activities/handover';
export type { StageTurn, TurnPrompt } from '../activities/turn';
export { builtInActivities, type ActivityDeps } from '../activities';
// A writer of an author's own writes through the worker's CRM (its own connection when the worker has one).
export { writesOf } from '../activities/deps';
export { ticketTriageActivities } from '../activities/ticket-triage';
export { supportRoutingActivities } from '../activities/support-routing';
export { ticketHubActivities } from '../activities/ticket-hub';
export { createHandrailWorkers, runWorkers, WorkerSetupError, type ActivitiesFor, type HandrailWorkerOptions } from './worker/worker';
export { openStore, type CrmStore, type Store, type WriteRequest, type WritesStore } from './worker/store';
export { loadConfig, type HandrailConfig, type WorkerRole } from './config';
export { connectWorker } from './connect';

// Maintainer side: replay recorded or live histories against the workflow code (`handrail replay`).
export {
  bundleWorkflows,
  describeReplayFailure,
  explainReplayError,
  historyFileSource,
  jobSources,
  querySources,
  quietReplayRuntime,
  readHistoryFile,
  replayHistories,
  replayHistoryFiles,
  HistoryFileError,
  // `handrail replay --diff`: recorded jobs through the current pipelines and stages.
  BUILT_IN_DIFF,
  DiffModuleError,
  diffHistories,
  diffHistoryFiles,
  diffRecordedJob,
  loadDiffPipelines,
  openStageRunner,
  recordedJob,
  type Difference,
  type DiffOptions,
  type DiffPipelines,
  type JobDiff,
  type RecordedJob,
  type RecordedStep,
  type StageRun,
  type StageRunner,
  type ReplayFailure,
  type ReplayOptions,
  type ReplayOutcome,
  type ReplaySource,
} from './replay';

// Payload encryption (docs/codec.md): the data converter for a client or replay of your own.
export { handrailDataConverter, codecKeysFromEnv, parseCodecKeys, AesGcmCodec, CodecConfigError, CodecKeyError, type CodecKeys } from './codec';

// Operator side: the client API (the CLI is a thin layer over it).
export {
  cancelJob,
  connectHandrail,
  decide,
  exportHistory,
  fetchJobHistory,
  getJob,
  jobResult,
  listJobs,
  parseJobRequest,
  startJob,
  watchJob,
  DecisionRefusedError,
  InvalidJobRequestError,
  JobClosedError,
  JobNotFoundError,
  NoWorkerAnsweredError,
  type JobFilter,
  type JobHandle,
  type JobListing,
  type JobView,
  type StartedJob,
} from './operator/client';
