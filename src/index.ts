/**
 * `handrail` — the pipeline author's entry: define pipelines and stages, write stage activities,
 * and run a worker. The other entries, by audience:
 * - `handrail/contracts` — the same definitions and the package contract, and nothing else: pure,
 *   safe in the workflow sandbox.
 * - `handrail/contracts/rail` — the same without the zod schemas: what a pipelines module that a
 *   workflow bundle preloads imports.
 * - `handrail/workflow` — `createRail`, for the worker's workflow module (sandbox-safe).
 * - `handrail/client` — start, follow, decide, list, cancel and export jobs.
 * - `handrail/replay` — replay recorded or live histories against the workflow code.
 * - `handrail/testing` — a dev server per test run and helpers to run a job to its end.
 * - `handrail/servers` — the A2A server, the handoff records API and the codec server, serving a
 *   plugin's pipelines (what `handrail serve` runs).
 * - `handrail/pipelines` (definitions) and `handrail/pipelines/worker` (their activities and
 *   plugin) — the built-in example pipelines, users of these entries like any other.
 */

// Defining pipelines and stages, and the package contract (also `handrail/contracts`).
export * from '../contracts';

// Stage work: the activity wrapper, artifacts, failures, summaries, handover.
export {
  stageActivities,
  appendUnique,
  writeOnce,
  type StageActivity,
  type StageOptions,
  type StageOutput,
  type StageWorkFn,
} from '../activities/stage';
export {
  jobArtifacts,
  latestArtifact,
  readArtifactBody,
  readArtifactText,
  requireArtifact,
  writeArtifact,
  type ArtifactText,
} from '../activities/artifacts';
export { stageFailure } from '../activities/failures';
export { readSummarySegments, SummaryUnreadableError } from '../activities/summary';
export {
  applyHandover,
  fitHandover,
  materializeTrace,
  transcriptXml,
  turnDirFor,
  ContextBudgetExceeded,
  HandoverError,
  type HandoverResult,
} from '../activities/handover';
export type { StageTurn, TurnPrompt } from '../activities/turn';
export { entryFieldsMissing, refuseBreaches, refuseForeignWrite } from '../activities/stage';
// Writes to systems handrail does not own, through the effect ledger (and the reference HTTP writer).
export {
  sendOnce,
  inDoubtEvidence,
  EffectRefused,
  type EffectRequest,
  type RemoteSystem,
} from '../activities/effect-ledger';
export { httpPayments } from '../activities/payments-http';
export { passedSummary } from '../activities/verdict';
export type { ActivityDeps } from '../activities/deps';
export { writesOf, turnOptions } from '../activities/deps';
// The rail's own activities (a worker adds them beside every pipeline's stages; so can a test).
export { railActivities, type RailActivities } from '../activities';

// Asking the worker's chat model from a stage.
export { askModel } from '../activities/model-call';
export type { ChatMessage, ChatModel, ChatReply } from './worker/model';
// What model tokens cost: the price table by model id, a call's cost, a tool loop's worst case.
export { loopWorstCaseUsd, priceFor, usageUsd, type ModelPrice, type PriceTable } from './worker/model/pricing';
// A model stage: one turn or a checkpointed tool loop on the AI SDK, its answer the emitted artifact.
export { runModelStage, type ModelStageSpec } from '../activities/model-stage';
// A delegating stage: the package sent to a remote A2A agent, its task waited for durably.
export { runA2aStage, type A2aStageSpec, type A2aAgent } from '../activities/a2a-stage';
export { runAgent, storedSteps, attemptSteps, ModelOutputError } from './agents';
export type { AgentRun, AgentAnswer, AgentStep, StepJournal } from './agents';

// A job's constraints as policies: the breaches a stage output shows, personal data redacted.
export {
  CONSTRAINT_POLICIES,
  constraintBreaches,
  redactPersonalDataFor,
  type ConstraintPolicy,
  type StageOutputView,
} from '../contracts/constraints';
export { PERSONAL_DATA_TOKENS } from '../contracts/personal-data';

// The worker: one plugin for worker and client, the workers it creates, the store.
export { HandrailPlugin, type ActivitiesFor, type HandrailPluginOptions } from './plugin';
export { createHandrailWorkers, runWorkers, WorkerSetupError, type HandrailWorkerOptions } from './worker/worker';
export {
  openStore,
  type CrmPatch,
  type CustomerTicket,
  type Store,
  type WriteRequest,
  type WritesStore,
} from './worker/store';
// Content hashing as the store addresses artifacts.
export { sha256Hex } from './worker/store/content';
// The store's help-center corpus: load it, and turn a question into the terms its search takes.
export { loadHelpCenter } from './worker/corpus';
export { searchTerms } from './worker/corpus/query';
export { loadConfig, type HandrailConfig, type WorkerRole } from './config';
export { connectWorker, TemporalUnreachableError, NamespaceNotFoundError } from './connect';
export { SEARCH_ATTRIBUTES } from '../workflows/search-attributes';

// Payload encryption: the data converter (the plugin uses it by default).
export {
  handrailDataConverter,
  codecKeysFromEnv,
  parseCodecKeys,
  AesGcmCodec,
  CodecConfigError,
  CodecKeyError,
  type CodecKeys,
} from './codec';
