/**
 * What a run hands the next when a job continues as new, and how the next run checks it: the
 * state round-trips through the contract's validator, the newest acks stay and the rest are
 * counted, and a state that is not this job's is refused. The workflow API is stubbed: these are
 * the module's decisions, not Temporal's.
 */
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { LIMITS, validators, type AckRecord } from '../../../contracts';
import { ticketTriage } from '../../../contracts/pipelines';
import { acceptCarried, carry, continueDue } from '../../../workflows/job/continue-as-new';
import { JobState } from '../../../workflows/job/state';
import { jobAttributes } from '../../../workflows/job/visibility';
import { fixturePackage } from '../rail/helpers';

const info = vi.hoisted(() => ({
  workflowId: 'job-1',
  historyLength: 10,
  continueAsNewSuggested: false,
  typedSearchAttributes: { getAll: () => [] },
}));
vi.mock('@temporalio/workflow', async (real) => ({
  ...(await real<object>()),
  workflowInfo: () => info,
  setHandler: () => undefined,
}));

const settings = {
  maxHops: 8,
  decisionTimeout: '7 days',
  traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
  owner: undefined,
  continueAfter: undefined,
};
const humans = { records: { count: 2 } } as never;
const pkg = () => ({ ...fixturePackage(), job_id: 'job-1' });
const ack = (kind: AckRecord['ack'], n: number): AckRecord =>
  ({ ...pkg().ack!, ack: kind, hop: n, reason: `ack ${n}` }) as AckRecord;
const request = { job_id: 'job-1', goal: 'g', constraints: [], budget: { usd: 1, revisions: 1 } };

function job(acks: AckRecord[]) {
  const state = new JobState(settings, ticketTriage, new Map(), { package: pkg(), stage: 'draft' });
  state.acks.push(...acks);
  return state;
}

beforeEach(() => Object.assign(info, { historyLength: 10, continueAsNewSuggested: false }));

describe('continueDue', () => {
  it("is due at the request's event or decision count, or when Temporal suggests it", () => {
    expect(continueDue({ events: 11, updates: 3 }, 2)).toBe(false);
    expect(continueDue({ events: 10 }, 0)).toBe(true);
    expect(continueDue({ updates: 3 }, 3)).toBe(true);
    expect(continueDue(undefined, 999)).toBe(false);
    expect(continueDue(undefined, 1_000)).toBe(true);
    info.continueAsNewSuggested = true;
    expect(continueDue(undefined, 0)).toBe(true);
  });
});

describe('carry and acceptCarried', () => {
  it('hands on the newest acks and counts the rest by kind, in a state the next run accepts', () => {
    const acks = Array.from({ length: LIMITS.acks + 3 }, (_, i) => ack(i < 2 ? 'rejected_budget' : 'accepted', i));
    const carried = carry(job(acks), humans);
    expect(carried.acks).toHaveLength(LIMITS.acks);
    expect(carried.acks[0]!.hop).toBe(3);
    expect(carried.earlier_acks).toEqual({ rejected_budget: 2, accepted: 1 });
    expect(carried.escalations).toBe(2);
    expect(acceptCarried(structuredClone(carried), request)).toEqual(carried);
  });

  it('the next run restores the job and keeps counting: its acks, wallet and the earlier kinds in visibility', () => {
    const first = job([ack('rejected_budget', 0), ack('accepted', 1)]);
    first.spentUsd = 0.25;
    const next = new JobState(
      settings,
      ticketTriage,
      new Map(),
      { package: pkg(), stage: 'intake' },
      { ...carry(first, humans), earlier_acks: { no_progress: 4 } },
    );
    expect(next.runs).toBe(2);
    expect(next.acks.map((a) => a.ack)).toEqual(['rejected_budget', 'accepted']);
    expect(next.spentUsd).toBe(0.25);
    expect(next.stage).toBe('draft');
    const view = next.view();
    expect(view).toMatchObject({ runs: 2, earlier_acks: { no_progress: 4 } });
    expect(jobAttributes(view, 'ticket-triage', next.acks).acks).toEqual([
      'no_progress',
      'rejected_budget',
      'accepted',
    ]);
  });

  it("a long job's result keeps the newest acks and counts the older ones, earlier runs' included, as the contract allows", () => {
    const acks = Array.from({ length: 2 * LIMITS.acks }, (_, i) => ack(i % 2 ? 'accepted' : 'duplicate', i));
    const state = new JobState(
      settings,
      ticketTriage,
      new Map(),
      { package: pkg(), stage: 'draft' },
      {
        ...carry(job([]), humans),
        earlier_acks: { no_progress: 4 },
      },
    );
    state.acks.push(...acks);
    const result = state.result('completed', 'written back');
    expect(result.acks).toEqual(acks.slice(-LIMITS.acks));
    expect(result.earlier_acks).toEqual({ no_progress: 4, duplicate: LIMITS.acks / 2, accepted: LIMITS.acks / 2 });
    expect(validators.jobResult(result)).toBe(true);
    expect(job([ack('accepted', 0)]).result('completed', 'done')).not.toHaveProperty('earlier_acks');
  });

  it("refuses a state that is malformed or another job's, naming why", () => {
    const carried = carry(job([]), humans);
    expect(() => acceptCarried({ ...carried, runs: 0 }, request)).toThrow(/invalid carried job state: .*runs/);
    expect(() => acceptCarried({ ...carried, package: { ...carried.package, job_id: 'job-2' } }, request)).toThrow(
      /job job-2's, not job-1's/,
    );
    expect(() => acceptCarried({ ...carried, extra: 1 }, request)).toThrow(/invalid carried job state/);
    expect(acceptCarried(undefined, request)).toBeUndefined();
  });
});
