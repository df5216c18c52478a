/**
 * `stageHop`: deliver one package to one stage — validate, ack, run — and return the ack with
 * the emitted package and artifact. The same hop `handoffJob` makes (workflows/run-hop.ts);
 * a second delivery of the same package answers `duplicate` with the first artifact.
 */
import { ApplicationFailure, setHandler, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import {
  refusalLines,
  validators,
  type AckRecord,
  type Artifact,
  type HandoffV1,
  type StageHopRequest,
} from '../contracts/rail';
import { snapshotQuery } from './definitions';
import { pipelineFor, type RailPipelines } from './job/request';
import { runHop } from './run-hop';
import { DEFAULT_MAX_HOPS } from './rail/hop-chain';
import { HandrailAck, HandrailStage, HandrailStatus } from './search-attributes';

export type { StageHopRequest };

export interface StageHopResult {
  /** The hop's final ack: `rejected_invariant` when the stage's output broke one. */
  ack: AckRecord;
  acks: AckRecord[];
  package?: HandoffV1;
  artifact?: Artifact;
  cost_usd: number;
  /** Why the stage failed, when it did after an `accepted` ack. */
  failure?: string;
}

// A traceparent for acks of packages too broken to carry one: all-zero ids are invalid by the
// W3C spec, so this uses fixed non-zero ids that say "no trace".
const NO_TRACE = '00-0000000000000000000000000000dead-000000000000dead-00';

export function createStageHop(rail: RailPipelines): (request: StageHopRequest) => Promise<StageHopResult> {
  return async function stageHop(input: StageHopRequest): Promise<StageHopResult> {
    // The package itself is validated by the hop (and acked); the envelope must be well-formed.
    if (!validators.stageHopRequest(input))
      throw ApplicationFailure.nonRetryable(
        `invalid stageHop request: ${refusalLines(validators.stageHopRequest.errors, 'request', 5).join('; ')}`,
        'InvalidStageHopRequest',
      );
    const request = input;
    const pipeline = pipelineFor(rail, request.pipeline, 'InvalidStageHopRequest');
    const outcome = await runHop(
      {
        pipeline,
        stage: request.stage,
        package: request.package,
        reason: request.delivery_id ? `delivery ${request.delivery_id}` : 'direct delivery',
        maxHops: request.max_hops ?? DEFAULT_MAX_HOPS,
        fallbackTraceparent: NO_TRACE,
        fallbackJobId: workflowInfo().workflowId,
      },
      { checkPriorDelivery: true, stages: rail.stages.get(pipeline.name)! },
    );
    const ack = outcome.acks[outcome.acks.length - 1]!;
    // A refused or duplicate delivery's snapshot, which no worker stored (its acks name it).
    const kept = outcome.unstoredSnapshot;
    setHandler(snapshotQuery, (uri) => (kept?.uri === uri ? kept.content : null));
    upsertSearchAttributes([
      { key: HandrailStage, value: outcome.stage },
      { key: HandrailAck, value: ack.ack },
      { key: HandrailStatus, value: outcome.ok ? 'completed' : 'rejected' },
    ]);
    return {
      ack,
      acks: outcome.acks,
      ...(outcome.package ? { package: outcome.package } : {}),
      ...(outcome.ok && outcome.result ? { artifact: outcome.result.artifact } : {}),
      cost_usd: outcome.costUsd,
      ...(outcome.failure ? { failure: outcome.failure } : {}),
    };
  };
}
