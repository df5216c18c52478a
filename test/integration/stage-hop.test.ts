/**
 * How a hop is tested, one property per test, through `stageHop` on the real dev server
 * with the production stages over a real store.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HandoffV1 } from '../../contracts';
import type { StageHopRequest } from '../../workflows/stage-hop';
import { firstPackage } from '../../workflows/rail/first-package';
import { deliverHop, jobRequest, scheduledActivities, stageActivities, startRail, type Rail } from '../helpers/rail';
import { SEED_TRACEPARENT } from '../scenarios';
import { ticketTriage } from '../../contracts/pipelines/ticket-triage';

const TRACE = SEED_TRACEPARENT;
let rail: Rail;

beforeAll(async () => {
  rail = await startRail();
});
afterAll(async () => {
  await rail?.stop();
});

const hop = (request: StageHopRequest, workflowId?: string) => deliverHop(rail, request, workflowId);

/** Walks a fresh ticket through the stages one stageHop at a time. */
async function relayTo(
  stage: 'retrieve' | 'draft' | 'judge' | 'writeback',
  overrides: Parameters<typeof jobRequest>[0] = {},
): Promise<HandoffV1> {
  const order = ['intake', 'retrieve', 'draft', 'judge', 'writeback'] as const;
  let pkg: HandoffV1 = firstPackage(jobRequest(overrides), TRACE, ticketTriage);
  for (const next of order.slice(0, order.indexOf(stage))) {
    const res = await hop({ stage: next, package: pkg });
    expect(res.ack.ack, `${next}: ${res.ack.reason}`).toBe('accepted');
    pkg = res.package!;
  }
  return pkg;
}

describe('stageHop: one hop at a time on the real dev server', () => {
  it('schema accept: a valid package is acked accepted and the stage emits its artifact', async () => {
    const pkg = firstPackage(jobRequest(), TRACE, ticketTriage);
    const res = await hop({ stage: 'intake', package: pkg });
    expect(res.ack.ack).toBe('accepted');
    expect(res.artifact?.type).toBe('intake.v1');
    expect(res.package?.artifacts.at(-1)).toEqual(res.artifact);
    expect(res.package?.budget.usd_remaining).toBeLessThan(pkg.budget.usd_remaining);
  });

  it('schema reject: missing job_id is rejected_schema and no stage activity runs', async () => {
    const { job_id: _dropped, ...pkg } = firstPackage(jobRequest(), TRACE, ticketTriage);
    const res = await hop({ stage: 'intake', package: pkg });
    expect(res.ack.ack).toBe('rejected_schema');
    expect(res.ack.errors).toContainEqual({ path: '/job_id', message: 'is required' });
    expect(res.cost_usd).toBe(0);
    expect(await scheduledActivities(rail.client, res.workflowId)).toEqual([]);
  });

  it('replay: a frozen retrieve output drafted again yields a summary the judge passes', async () => {
    const frozen = await relayTo('draft');
    const drafted = await hop({ stage: 'draft', package: structuredClone(frozen) });
    expect(drafted.ack.ack).toBe('accepted');
    expect(drafted.artifact?.type).toBe('summary_md');
    const judged = await hop({ stage: 'judge', package: drafted.package });
    expect(judged.ack.ack).toBe('accepted');
    expect(judged.package?.evaluator.last_verdict).toBe('pass');
  });

  it('stale plan: after a failed verdict the drafter does not reuse the rejected draft, and writeback refuses', async () => {
    const judged = await relayTo('writeback');
    const rejectedDraft = judged.artifacts.find((a) => a.type === 'summary_md')!;
    const stale: HandoffV1 = {
      ...judged,
      evaluator: { last_verdict: 'fail', failures: ['citation_missing: cites no retrieved chunk'] },
    };

    const write = await hop({ stage: 'writeback', package: stale });
    expect(write.ack.ack).toBe('rejected_invariant');
    expect(write.ack.invariant).toBe('writeback_requires_pass');
    expect(await rail.store.listWrites(stale.job_id)).toHaveLength(0);

    const revised = await hop({ stage: 'draft', package: stale });
    expect(revised.ack.ack).toBe('accepted');
    expect(revised.artifact?.type).toBe('summary_md');
    expect(revised.artifact?.uri).not.toBe(rejectedDraft.uri);
  });

  it('duplicate delivery: the same hop twice writes once and the second ack is duplicate with the first receipt', async () => {
    const passed = await relayTo('writeback');
    const first = await hop({ stage: 'writeback', package: passed });
    const second = await hop({ stage: 'writeback', package: passed });
    expect(first.ack.ack).toBe('accepted');
    expect(second.ack.ack).toBe('duplicate');
    expect(second.artifact).toEqual(first.artifact);
    expect(second.cost_usd).toBe(0);
    expect(await rail.store.listWrites(passed.job_id)).toHaveLength(1);
    // The rail looks the key up itself and records the result it accepted, whoever serves the
    // stage: the repeat is answered from the rail's lookup, and the writer is not asked again.
    expect(await scheduledActivities(rail.client, first.workflowId)).toEqual([
      'priorDelivery',
      'writeback',
      'recordDelivery',
    ]);
    expect(await scheduledActivities(rail.client, second.workflowId)).toEqual(['priorDelivery']);
    expect(second.acks).toEqual([second.ack]);
    // The trace on the ack is the trace on the package it acknowledged.
    expect(second.ack.traceparent).toBe(passed.trace.traceparent);
  });

  it('duplicate before the hop cap: a repeat sent with a lower max_hops is still duplicate, looked up before any stage', async () => {
    const passed = await relayTo('writeback');
    const first = await hop({ stage: 'writeback', package: passed });
    const capped = await hop({ stage: 'writeback', package: passed, max_hops: 1 });
    expect(first.ack.ack).toBe('accepted');
    expect(capped.ack.ack).toBe('duplicate');
    expect(capped.artifact).toEqual(first.artifact);
    expect(await scheduledActivities(rail.client, capped.workflowId)).toEqual(['priorDelivery']);
    // A fresh job over the same cap is refused without the stage: the lookup found nothing.
    const fresh = await hop({ stage: 'writeback', package: await relayTo('writeback'), max_hops: 1 });
    expect(fresh.ack.ack).toBe('max_hops_exceeded');
    expect(await stageActivities(rail.client, fresh.workflowId)).toEqual([]);
    expect(await rail.store.listWrites(passed.job_id)).toHaveLength(1);
  });

  it('chaos optional: dropping each optional field still gets the package accepted', async () => {
    for (const field of ['next_hint', 'hop', 'summary', 'ack'] as const) {
      // A fresh job per variant: the same job's package again would rightly be a duplicate.
      const base = await relayTo('retrieve');
      const full: HandoffV1 = {
        ...base,
        next_hint: 'retrieve the refund policy',
        summary: '0. intake: accepted → intake.v1',
      };
      const { [field]: _dropped, ...pkg } = full;
      const res = await hop({ stage: 'retrieve', package: pkg });
      expect(res.ack.ack, `without ${field}: ${res.ack.reason}`).toBe('accepted');
    }
  });

  it('chaos required: dropping each required field fails closed naming it, with no stage work', async () => {
    const base = await relayTo('retrieve');
    const required = [
      'schema',
      'job_id',
      'goal',
      'constraints',
      'artifacts',
      'open_questions',
      'tools_tried',
      'evaluator',
      'budget',
      'memory_refs',
      'trace',
    ] as const;
    for (const field of required) {
      const { [field]: _dropped, ...pkg } = base;
      const res = await hop({ stage: 'retrieve', package: pkg });
      expect(res.ack.ack, field).toBe('rejected_schema');
      expect(JSON.stringify(res.ack.errors), field).toContain(field);
      expect(await scheduledActivities(rail.client, res.workflowId), field).toEqual([]);
    }
  });

  it('empty wallet: usd_remaining 0 is rejected_budget and nothing is written', async () => {
    const passed = await relayTo('writeback');
    const broke: HandoffV1 = { ...passed, budget: { ...passed.budget, usd_remaining: 0 } };
    const res = await hop({ stage: 'writeback', package: broke });
    expect(res.ack.ack).toBe('rejected_budget');
    expect(await rail.store.listWrites(passed.job_id)).toHaveLength(0);
    expect(await stageActivities(rail.client, res.workflowId)).toEqual([]);
  });

  it('role: a package whose newest artifact the stage does not take is rejected_role before any work', async () => {
    const pkg = firstPackage(jobRequest(), TRACE, ticketTriage);
    const res = await hop({ stage: 'judge', package: pkg });
    expect(res.ack.ack).toBe('rejected_role');
    expect(await scheduledActivities(rail.client, res.workflowId)).toEqual([]);
  });
});
