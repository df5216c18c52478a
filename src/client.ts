/**
 * `handrail/client` — what an operator's script or service uses: connect, start a job (a second
 * start of the same job id attaches to it), fork one from a hop, follow it (`followJob`: its live stream), answer an escalation (`decide`), cancel,
 * list and export. Give the client the workers' `HandrailPlugin` (`new Client({ plugins })` or
 * `connectHandrail(config, plugin)`) and it converts payloads as they do and knows the pipelines.
 */
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
  JobEndedError,
  JobNotFoundError,
  NoWorkerAnsweredError,
  type JobFilter,
  type JobHandle,
  type JobListing,
  type JobView,
  type StartedJob,
  type StartOptions,
} from './operator/client';
export { followJob, type FollowItem, type FollowOptions } from './stream/follow';
export type { DurableEvent, JobEvent, JobPublicState, StreamAck, TextDelta } from './stream/events';
export { forkJob, ForkRefusedError, type ForkOptions, type StartedFork } from './operator/fork';
export { HopNotFoundError } from './operator/snapshot';
export { HandrailPlugin, handrailPluginOf } from './plugin';
export { loadConfig, type HandrailConfig } from './config';
export { handrailDataConverter } from './codec';
export type { JobRequest, JobResult, HumanDecision, HandoffV1, AckRecord, AckState } from '../contracts';
