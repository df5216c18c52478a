/**
 * A job's request as the rail takes it: valid by the contract, run under its own id, naming a
 * pipeline this worker runs and carrying that pipeline's entry. Anything else fails the job at
 * once (non-retryable, naming what is wrong) instead of a workflow task retried forever.
 */
import { ApplicationFailure, upsertSearchAttributes, uuid4, workflowInfo } from '@temporalio/workflow';
import {
  entryBodyProblems,
  findPipeline,
  refusalLines,
  requestEntry,
  validators,
  type JobRequest,
  type Pipeline,
} from '../../contracts/rail';
import { DEFAULT_MAX_HOPS } from '../rail/hop-chain';
import { HandrailStatus } from '../search-attributes';
import type { StageProxies } from '../run-hop';
import type { JobSettings } from './state';

/** How long an escalation waits for `decide` when the request does not say. */
export const DEFAULT_DECISION_TIMEOUT = '7 days';

/** The pipelines a rail runs, each with its stage activities proxied once. */
export interface RailPipelines {
  pipelines: readonly Pipeline[];
  stages: ReadonlyMap<string, StageProxies>;
}

/** The pipeline a request names (the first when it names none); an unknown one fails the
 * workflow at once, non-retryable, naming the ones this worker runs. */
export function pipelineFor(rail: RailPipelines, name: string | undefined, failureType: string): Pipeline {
  const pipeline = findPipeline(rail.pipelines, name);
  if (!pipeline)
    throw ApplicationFailure.nonRetryable(
      `unknown pipeline ${JSON.stringify(name)}; this worker runs ${rail.pipelines.map((p) => p.name).join(', ')}`,
      failureType,
    );
  return pipeline;
}

/** The request and its pipeline, checked; a job refused here shows `rejected` as it fails. */
export function acceptRequest(rail: RailPipelines, input: unknown): { request: JobRequest; pipeline: Pipeline } {
  try {
    const request = checkedRequest(input);
    const pipeline = pipelineFor(rail, request.pipeline, 'InvalidJobRequest');
    checkEntry(request, pipeline);
    return { request, pipeline };
  } catch (err) {
    refusedAtStart();
    throw err;
  }
}

/** What the request fixes for the whole job. */
export function jobSettings(request: JobRequest, carriedTraceparent?: string): JobSettings {
  return {
    maxHops: request.max_hops ?? DEFAULT_MAX_HOPS,
    decisionTimeout: request.decision_timeout ?? DEFAULT_DECISION_TIMEOUT,
    traceparent: request.traceparent ?? carriedTraceparent ?? newTraceparent(),
    owner: request.owner,
    continueAfter: request.continue_after,
  };
}

/** A job started with its first attributes (`startJob`) shows `running` until the rail publishes
 * otherwise: one refused before its first hop says `rejected` as it fails. Only a start that
 * carried a status needs the correction. */
function refusedAtStart(): void {
  if (workflowInfo().typedSearchAttributes.get(HandrailStatus) !== undefined) {
    upsertSearchAttributes([{ key: HandrailStatus, value: 'rejected' }]);
  }
}

function checkedRequest(input: unknown): JobRequest {
  if (!validators.jobRequest(input))
    throw ApplicationFailure.nonRetryable(
      `invalid job request: ${refusalLines(validators.jobRequest.errors, 'request', 5).join('; ')}`,
      'InvalidJobRequest',
    );
  const request = input;
  const own = workflowInfo().workflowId;
  if (request.job_id !== own) {
    throw ApplicationFailure.nonRetryable(
      `job_id ${request.job_id} is not this workflow's id (${own}): a job runs under its own id`,
      'InvalidJobRequest',
    );
  }
  return request;
}

/** The request's entry as its pipeline declares it (`entry`, or the field it used to arrive in). */
function checkEntry(request: JobRequest, pipeline: Pipeline): void {
  const body = requestEntry(request, pipeline.entrySpec);
  const alias = pipeline.entrySpec.alias;
  if (request.entry !== undefined && alias !== undefined && request[alias] !== undefined) {
    throw ApplicationFailure.nonRetryable(
      `invalid job request: both entry and ${alias} given; send the ${pipeline.entry} as entry only`,
      'InvalidJobRequest',
    );
  }
  if (body === undefined) {
    throw ApplicationFailure.nonRetryable(
      `invalid job request: entry is required (a ${pipeline.entry} for pipeline ${pipeline.name})`,
      'InvalidJobRequest',
    );
  }
  const problems = entryBodyProblems(pipeline.entrySpec.schema, body, 5);
  if (problems.length > 0) {
    throw ApplicationFailure.nonRetryable(
      `invalid job request: entry is not a valid ${pipeline.entry} for pipeline ${pipeline.name}: ${problems.join('; ')}`,
      'InvalidJobRequest',
    );
  }
}

/** W3C traceparent from workflow-seeded randomness (deterministic on replay). */
function newTraceparent(): string {
  const hex = () => uuid4().replace(/-/g, '');
  return `00-${hex()}-${hex().slice(0, 16)}-01`;
}
