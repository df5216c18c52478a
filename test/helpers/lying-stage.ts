/**
 * What the rail must do with a lying `retrieve`, whoever serves it (a raw TypeScript activity, a
 * Python worker): the lies a stage is told to tell, and the checks that each is refused with
 * nothing recorded and nothing paid beyond the hop's reservation.
 */
import { expect } from 'vitest';
import type { AckRecord, HandoffV1, Pipeline } from '../../contracts/rail';
import type { JobStatusView } from '../../workflows/definitions';
import { firstPackage } from '../../workflows/rail/first-package';
import { startJob, type StartOptions } from '../../src/operator/client';
import { deliverHop, jobRequest, uniqueId, waitForStatus, type Rail } from './rail';
import { SEED_TRACEPARENT } from '../scenarios';

export type Lie = 'honest' | 'false-duplicate' | 'grown-wallet' | 'changed-goal' | 'foreign-artifact';

/** Each lie with the invariant the rail names when it refuses it. */
export const LIES = [
  ['false-duplicate', 'duplicate_claim_verified'],
  ['grown-wallet', 'budget_not_increased'],
  ['changed-goal', 'goal_unchanged'],
  ['foreign-artifact', 'artifacts_append_only'],
] as const;

/** A fresh ticket through the real intake: the package `retrieve` gets (the stage must be honest by now). */
export async function afterIntake(rail: Rail, pipeline: Pick<Pipeline, 'entry' | 'entrySpec'>): Promise<HandoffV1> {
  const res = await deliverHop(rail, {
    stage: 'intake',
    package: firstPackage(jobRequest(), SEED_TRACEPARENT, pipeline),
  });
  expect(res.ack.ack, res.ack.reason).toBe('accepted');
  return res.package!;
}

/** Delivers `pkg` to the lying `retrieve`: refused naming `invariant`, the package goes on as
 * delivered, nothing recorded, at most `reservation` paid. Returns the refused delivery's key. */
export async function expectLieRefused(
  rail: Rail,
  pkg: HandoffV1,
  invariant: string,
  reservation: number,
): Promise<string> {
  const res = await deliverHop(rail, { stage: 'retrieve', package: pkg });
  expect(res.ack).toMatchObject({ ack: 'rejected_invariant', invariant });
  expect(res.artifact).toBeUndefined();
  expect(res.package).toMatchObject({ goal: pkg.goal, artifacts: pkg.artifacts });
  expect(res.package!.budget.usd_remaining).toBeLessThanOrEqual(pkg.budget.usd_remaining);
  expect(res.cost_usd).toBeLessThanOrEqual(reservation);
  // Nothing recorded under the delivery: a repeat is not answered from the lie.
  expect(await rail.store.findStageRecord(`direct:${res.ack.delivery_key}`)).toBeNull();
  return res.ack.delivery_key;
}

/** Delivers `pkg` twice to an honest `retrieve`: the rail answers the repeat `duplicate` with the
 * first artifact, free, and the stage (`worked`: the delivery keys it worked on) worked once. */
export async function expectRepeatWorkedOnce(
  rail: Rail,
  pkg: HandoffV1,
  worked: () => readonly string[],
): Promise<void> {
  const first = await deliverHop(rail, { stage: 'retrieve', package: pkg });
  const second = await deliverHop(rail, { stage: 'retrieve', package: pkg });
  expect([first.ack.ack, second.ack.ack]).toEqual(['accepted', 'duplicate']);
  expect(second.artifact).toEqual(first.artifact);
  expect(second.cost_usd).toBe(0);
  expect(worked().filter((k) => k === first.ack.delivery_key)).toHaveLength(1);
}

/** A job whose `retrieve` claims a false duplicate (rewritten goal, $999 wallet): it escalates on
 * rejected_invariant, its goal and wallet as they were, nothing written. */
export async function expectJobRefusesFalseDuplicate(rail: Rail, start: Partial<StartOptions>): Promise<void> {
  const request = jobRequest({ job_id: uniqueId('liar-job') });
  const { handle } = await startJob(rail.client, request, start);
  try {
    const view: JobStatusView = await waitForStatus(handle, 'escalated');
    const acks = await handle.query<AckRecord[]>('acks');
    expect(acks.filter((a) => a.stage === 'retrieve').map((a) => `${a.ack} ${a.invariant ?? ''}`.trim())).toEqual([
      'accepted',
      'rejected_invariant duplicate_claim_verified',
    ]);
    expect(view.usd_remaining).toBeLessThanOrEqual(request.budget.usd);
    const pkg = await handle.query<HandoffV1>('package');
    expect(pkg.goal).toBe(request.goal);
    expect(pkg.artifacts.map((a) => a.type)).toEqual(['ticket.raw', 'intake.v1']);
    expect(await rail.store.listWrites(request.job_id)).toEqual([]);
  } finally {
    await handle.cancel();
  }
}
