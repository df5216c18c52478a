/**
 * The job's bookkeeping: a fan-out branch's acks take the place of its admission ack, so the
 * acks read in fan-out order however the branches finish; unstored snapshots are bounded. The
 * workflow API is stubbed: these are the module's decisions, not Temporal's.
 */
import { describe, expect, it, vi } from 'vitest';
import type { AckRecord } from '../../../contracts';
import { ticketTriage } from '../../../contracts/pipelines';
import type { HopOutcome } from '../../../workflows/run-hop';
import { JobState } from '../../../workflows/job/state';
import { fixturePackage } from '../rail/helpers';

vi.mock('@temporalio/workflow', async (real) => ({
  ...(await real<object>()),
  workflowInfo: () => ({ workflowId: 'job-1', typedSearchAttributes: { getAll: () => [] } }),
}));

const settings = {
  maxHops: 8,
  decisionTimeout: '7 days',
  traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
  owner: undefined,
  continueAfter: undefined,
};
const ack = (stage: string, kind: AckRecord['ack'] = 'accepted'): AckRecord =>
  ({ ...fixturePackage().ack!, stage, ack: kind }) as AckRecord;
const outcome = (acks: AckRecord[], costUsd = 0.01): HopOutcome => ({
  acks,
  ok: true,
  stage: acks[0]!.stage,
  costUsd,
  overspentUsd: 0,
});
const job = () => new JobState(settings, ticketTriage, new Map(), { package: fixturePackage(), stage: 'intake' });

describe('JobState.record', () => {
  it("puts a branch's acks where its admission ack was, and adds up what the hops cost", () => {
    const state = job();
    const [policy, account] = [ack('policy'), ack('account')];
    state.acks.push(policy, account);
    state.record(outcome([ack('account'), ack('account', 'no_progress')]), account);
    state.record(outcome([ack('policy')]), policy);
    expect(state.acks.map((a) => `${a.stage}:${a.ack}`)).toEqual([
      'policy:accepted',
      'account:accepted',
      'account:no_progress',
    ]);
    expect(state.spentUsd).toBeCloseTo(0.02, 9);
  });

  it('keeps the newest sixteen snapshots no worker stored', () => {
    const state = job();
    for (let i = 0; i < 20; i++) state.keepSnapshot({ uri: `handrail://snapshots/${i}`, content: String(i) });
    expect([...state.snapshots.keys()]).toHaveLength(16);
    expect(state.snapshots.has('handrail://snapshots/3')).toBe(false);
    expect(state.snapshots.get('handrail://snapshots/19')).toBe('19');
  });
});
