import { describe, expect, it } from 'vitest';
import {
  HANDOFF_V2,
  PipelineDefinitionError,
  defineStage,
  definePipeline,
  handoffV2Version,
  upgradeV1ToV2,
  type PipelineSpec,
} from '../../../contracts';
import { admitHop, decideHop, type HopRequest } from '../../../workflows/rail/hop-decisions';
import { DEFAULT_MAX_HOPS } from '../../../workflows/rail/hop-chain';
import { at } from './helpers';
import { ticketEntry } from '../../../contracts/pipelines/ticket-entry';

// A one-stage pipeline whose stage reads only handoff.v2, while packages still arrive as v1.
const NAME = 'v2-triage';
const intakeV2 = defineStage({
  name: 'intake',
  accepts: ['ticket.raw'],
  outputs: ['intake.v1'],
  packageVersions: [HANDOFF_V2],
  criteria: ['reads handoff.v2 only'],
  nominalCostUsd: 0.001,
});
const spec = {
  name: NAME,
  entry: ticketEntry,
  stages: [intakeV2],
  routes: [
    { after: 'ticket.raw', to: 'intake', reason: 'new ticket' },
    { after: 'intake.v1', complete: 'intake done' },
  ],
} satisfies PipelineSpec;

const withUpgrader = definePipeline({
  ...spec,
  versions: { handoff: [handoffV2Version], upgraders: [upgradeV1ToV2(NAME)] },
});
const withoutUpgrader = definePipeline({ ...spec, versions: { handoff: [handoffV2Version] } });

function hop(pipeline: HopRequest['pipeline'], pkg: unknown) {
  const r: HopRequest = {
    pipeline,
    stage: 'intake',
    package: pkg,
    reason: 'new ticket',
    maxHops: DEFAULT_MAX_HOPS,
    fallbackTraceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
    fallbackJobId: 'job-fallback',
  };
  const admission = admitHop(r);
  return { admission, decision: decideHop(admission, r, null) };
}

describe('a stage that reads only handoff.v2, fed a v1 package', () => {
  it('accepts it upgraded: the arrived package is v2 and names the pipeline', () => {
    const v1 = at.start();
    const { admission, decision } = hop(withUpgrader, v1);
    expect(decision.ack).toBe('accepted');
    expect(admission.arrived).toEqual({ ...v1, schema: HANDOFF_V2, pipeline: NAME });
    expect(admission.deliverable).toBe(true);
  });

  it('acks rejected_schema naming both versions when the pipeline declares no upgrader', () => {
    const { admission, decision } = hop(withoutUpgrader, at.start());
    expect(admission.arrived).toBeUndefined();
    expect(decision).toMatchObject({ ack: 'rejected_schema', errors: [{ path: '/schema' }] });
    expect(decision.reason).toBe('unsupported version: /schema version "handoff.v1" not accepted (accepts handoff.v2)');
  });

  it('acks rejected_schema when the v1 package already carries a pipeline field of its own', () => {
    const { decision } = hop(withUpgrader, { ...at.start(), pipeline: 'billing' });
    expect(decision).toMatchObject({
      ack: 'rejected_schema',
      reason: 'unsupported version: /schema upgrade handoff.v1 -> handoff.v2 failed',
    });
  });
});

describe('definePipeline and package versions', () => {
  it('refuses a stage reading handoff.v2 when the pipeline does not declare it', () => {
    expect(() => definePipeline(spec)).toThrow(PipelineDefinitionError);
    expect(() => definePipeline(spec)).toThrow('stage "intake" reads handoff.v2, which this pipeline does not declare');
  });

  it('refuses an upgrader into a version the pipeline does not declare', () => {
    expect(() => definePipeline({ ...spec, versions: { upgraders: [upgradeV1ToV2(NAME)] } })).toThrow(
      'upgrader handoff.v1 → handoff.v2 names a version this pipeline does not declare',
    );
  });
});
