/**
 * The durable events a job's records hold, as every reader derives them: a hop a stage worked
 * after a human's decision is a hop (started and finished), the same from the running job's
 * records as from its result — the follow-restarts test saw `hop 1: draft` live (from the
 * working reservation) and not in a reader of the finished job, whose acks named an actor on it.
 */
import { expect, it } from 'vitest';
import type { AckRecord } from '../../../contracts';
import type { JobStatusShown } from '../../../src/operator/client';
import { railEvents } from '../../../src/stream/events';

const at = '2026-12-07T00:00:00.000Z';
const ack = (a: Partial<AckRecord> & Pick<AckRecord, 'ack' | 'stage' | 'hop'>): AckRecord =>
  ({ reason: 'r', delivery_key: `j:${a.stage}:${a.hop}`, traceparent: '00-0-0-01', at, ...a }) as AckRecord;

const status = (over: Partial<JobStatusShown>): JobStatusShown =>
  ({
    job_id: 'j',
    status: 'running',
    stage: 'draft',
    hops: 1,
    usd_remaining: 1,
    revisions_remaining: 1,
    spent_usd: 0,
    reserved_usd: 0,
    reservations: [],
    last_verdict: 'none',
    ...over,
  }) as JobStatusShown;

const refused = ack({ ack: 'rejected_budget', stage: 'draft', hop: 2 });
const toHuman = ack({ ack: 'accepted', stage: 'human', hop: 1 });
const decided = ack({ ack: 'accepted', stage: 'human', hop: 1, actor: 'ops' });
const resumed = ack({ ack: 'accepted', stage: 'draft', hop: 1, actor: 'ops', reserved_usd: 0.01, settled_usd: 0.01 });

it("a hop resumed by a human's decision is a hop: its start, its ack (a decision) and its finish", () => {
  const keys = railEvents({
    jobId: 'j',
    status: status({ status: 'completed' }),
    acks: [refused, toHuman, decided, resumed],
  }).map((e) => e.key);
  expect(keys).toEqual([
    'job',
    'ack:2:rejected_budget:0',
    'hop:1:human',
    'ack:1:accepted:0',
    'hop:1:human:end',
    'ack:1:accepted:1',
    'hop:1:draft',
    'ack:1:accepted:2',
    'hop:1:draft:end',
    'end',
  ]);
});

it('the same hop read while it works (its reservation) and after (its ack) has the one start key', () => {
  const working = railEvents({
    jobId: 'j',
    status: status({ reservations: [{ stage: 'draft', hop: 1, usd: 0.01 }] }),
    acks: [refused, toHuman, decided],
  }).map((e) => e.key);
  const after = railEvents({
    jobId: 'j',
    status: status({ status: 'completed' }),
    acks: [refused, toHuman, decided, resumed],
  }).map((e) => e.key);
  expect(working).toContain('hop:1:draft');
  expect(after).toContain('hop:1:draft');
});
