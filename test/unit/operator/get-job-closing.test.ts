/**
 * A job read in the moment between the rail publishing its ending and Temporal closing the run:
 * the `status` query already says `completed` and the run is still open, with no result (so no
 * receipt). `getJob` never gives that view out: it reads the run once closed. The moment is made
 * here by a client whose first describe says RUNNING (a real server cannot be held in it on cue).
 */
import type { Client } from '@temporalio/client';
import { describe, expect, it } from 'vitest';
import type { JobResult } from '../../../contracts';
import { getJob } from '../../../src/operator/client';

const status = {
  job_id: 'j1',
  status: 'completed',
  stage: 'writeback',
  hops: 4,
  usd_remaining: 0.9,
  revisions_remaining: 2,
  spent_usd: 0.1,
  reserved_usd: 0,
  reservations: [],
  last_verdict: 'pass',
};
const result = {
  job_id: 'j1',
  status: 'completed',
  reason: 'written back',
  package: { budget: { usd_remaining: 0.9, revisions_remaining: 2 }, evaluator: { last_verdict: 'pass' } },
  acks: [],
  receipt: { write_key: 'j1:writeback:receipt.v1' },
  spent_usd: 0.1,
  hops: 4,
} as unknown as JobResult;

/** A client on a job whose run is open for the first `openDescribes` describes, then closed. */
function closingJob(openDescribes: number) {
  let describes = 0;
  const described = () => ({
    status: { name: ++describes <= openDescribes ? 'RUNNING' : 'COMPLETED' },
    taskQueue: 'q',
    startTime: new Date(0),
    typedSearchAttributes: { get: () => undefined },
  });
  const handle = {
    describe: async () => described(),
    query: async (q: { name: string }) => (q.name === 'status' ? status : q.name === 'acks' ? [] : result.package),
    result: async () => result,
  };
  return {
    workflow: { getHandle: () => handle },
    connection: { withDeadline: <T>(_d: number, fn: () => Promise<T>) => fn() },
  } as unknown as Client;
}

describe('getJob between the rail publishing its ending and the run closing', () => {
  it('reads the closed run: the result, its receipt and COMPLETED, never the open view', async () => {
    const view = await getJob(closingJob(1), 'j1');
    expect([view.run_status, view.status.status, view.result?.receipt]).toEqual([
      'COMPLETED',
      'completed',
      result.receipt,
    ]);
  });

  it('a run that stays open (the rail said so, the run has not closed in the wait) is shown as it stands', async () => {
    const view = await getJob(closingJob(99), 'j1');
    expect([view.run_status, view.result]).toEqual(['RUNNING', undefined]);
  });
});
