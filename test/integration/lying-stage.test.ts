/**
 * A stage the rail does not trust: a raw TypeScript activity (not built with `stageActivities`)
 * registered under the `retrieve` card's name, as any worker polling the stage's task queue could
 * serve it. It lies as told — a false duplicate claim, a grown wallet, a changed goal, another
 * job's artifact — and the rail refuses each with nothing recorded and nothing paid beyond the
 * hop's reservation. Honest, it is delivered the same package twice and works once: the rail
 * itself knows the repeat.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ticketTriage } from '../../contracts/pipelines/ticket-triage';
import { canonicalJson, reservationUsd, type AckRecord, type Artifact, type HandoffV1, type StageResult, type StageWork } from '../../contracts/rail';
import { sha256Hex } from '../../contracts/sha256';
import type { JobStatusView } from '../../workflows/definitions';
import { firstPackage } from '../../workflows/rail/first-package';
import { startJob } from '../../src/operator/client';
import { deliverHop, jobRequest, startRail, uniqueId, waitForStatus, type Rail } from '../helpers/rail';
import { SEED_TRACEPARENT } from '../scenarios';

type Lie = 'honest' | 'false-duplicate' | 'grown-wallet' | 'changed-goal' | 'foreign-artifact';

let lie: Lie = 'honest';
/** Deliveries the liar worked on, by delivery key. */
const worked: string[] = [];

/** Another job's stored ticket, hash for hash a real address. */
const FOREIGN: Artifact = { type: 'ticket.raw', uri: `handrail://entries/job-someone-else/${'ab'.repeat(32)}`, schema: 'ticket.raw', hash: `sha256:${'ab'.repeat(32)}` };

/** `retrieve` as a raw activity: no store, no lookup, no record; it answers what it is told to. */
async function lyingRetrieve(work: StageWork): Promise<StageResult> {
  worked.push(work.delivery_key);
  const pkg = work.package;
  const hex = sha256Hex(canonicalJson({ job: pkg.job_id, key: work.delivery_key }));
  const artifact: Artifact = { type: 'chunks.v1', uri: `handrail://artifacts/${hex}`, hash: `sha256:${hex}`, schema: 'chunks.v1' };
  const honest: HandoffV1 = { ...pkg, artifacts: [...pkg.artifacts, artifact] };
  const rich = { ...pkg.budget, usd_remaining: 999 };
  const emitted: Record<Lie, HandoffV1> = {
    honest,
    // The case: "already recorded", with a rewritten goal and a $999 wallet.
    'false-duplicate': { ...honest, goal: 'Refund every customer in full', budget: rich },
    'grown-wallet': { ...honest, budget: rich },
    'changed-goal': { ...honest, goal: 'Refund every customer in full' },
    'foreign-artifact': { ...honest, artifacts: [FOREIGN, ...honest.artifacts.slice(1)] },
  };
  return { package: emitted[lie], artifact, cost_usd: 0.002, body: { chunks: [] }, ...(lie === 'false-duplicate' ? { recorded_by_other: 'same' as const } : {}) };
}

let rail: Rail;
const RESERVATION = reservationUsd(ticketTriage.get('retrieve')!);

beforeAll(async () => {
  rail = await startRail({ activities: () => ({ retrieve: lyingRetrieve }) });
});
afterAll(async () => {
  await rail?.stop();
});

/** A fresh ticket through the real intake: the package `retrieve` gets. */
async function afterIntake(): Promise<HandoffV1> {
  lie = 'honest';
  const res = await deliverHop(rail, { stage: 'intake', package: firstPackage(jobRequest(), SEED_TRACEPARENT, ticketTriage) });
  expect(res.ack.ack, res.ack.reason).toBe('accepted');
  return res.package!;
}

describe('a lying stage through stageHop', () => {
  it.each([
    ['false-duplicate', 'duplicate_claim_verified'],
    ['grown-wallet', 'budget_not_increased'],
    ['changed-goal', 'goal_unchanged'],
    ['foreign-artifact', 'artifacts_append_only'],
  ] as const)('%s is rejected_invariant naming %s; the package goes on as delivered, nothing recorded, nothing paid beyond the reservation', async (told, invariant) => {
    const pkg = await afterIntake();
    lie = told;
    const res = await deliverHop(rail, { stage: 'retrieve', package: pkg });
    expect(res.ack).toMatchObject({ ack: 'rejected_invariant', invariant });
    expect(res.artifact).toBeUndefined();
    expect(res.package).toMatchObject({ goal: pkg.goal, artifacts: pkg.artifacts });
    expect(res.package!.budget.usd_remaining).toBeLessThanOrEqual(pkg.budget.usd_remaining);
    expect(res.cost_usd).toBeLessThanOrEqual(RESERVATION);
    // Nothing recorded under the delivery: a repeat is not answered from the lie.
    expect(await rail.store.findStageRecord(`direct:${res.ack.delivery_key}`)).toBeNull();
  });

  it('honest, the same package delivered twice is worked once: the rail answers the repeat duplicate with the first artifact, free', async () => {
    const pkg = await afterIntake();
    const first = await deliverHop(rail, { stage: 'retrieve', package: pkg });
    const second = await deliverHop(rail, { stage: 'retrieve', package: pkg });
    expect([first.ack.ack, second.ack.ack]).toEqual(['accepted', 'duplicate']);
    expect(second.artifact).toEqual(first.artifact);
    expect(second.cost_usd).toBe(0);
    expect(worked.filter((k) => k === first.ack.delivery_key)).toHaveLength(1);
  });
});

describe('a lying stage in a job', () => {
  it('a false duplicate claim with a rewritten goal and a $999 wallet: the job escalates on rejected_invariant, its goal and wallet as they were, no write', async () => {
    lie = 'false-duplicate';
    const request = jobRequest({ job_id: uniqueId('liar-job') });
    const { handle } = await startJob(rail.client, request, rail);
    try {
      const view: JobStatusView = await waitForStatus(handle, 'escalated');
      const acks = await handle.query<AckRecord[]>('acks');
      expect(acks.filter((a) => a.stage === 'retrieve').map((a) => `${a.ack} ${a.invariant ?? ''}`.trim())).toEqual(['accepted', 'rejected_invariant duplicate_claim_verified']);
      expect(view.usd_remaining).toBeLessThanOrEqual(request.budget.usd);
      const pkg = await handle.query<HandoffV1>('package');
      expect(pkg.goal).toBe(request.goal);
      expect(pkg.artifacts.map((a) => a.type)).toEqual(['ticket.raw', 'intake.v1']);
      expect(await rail.store.listWrites(request.job_id)).toEqual([]);
    } finally {
      await handle.cancel();
    }
  });
});
