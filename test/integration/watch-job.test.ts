/**
 * What following a job costs the server: `watchJob` describes the job once and polls the `status`
 * query, asking for the acks only when the status moved, however many polls the job takes.
 * Counted through a client interceptor on the calls themselves.
 */
import { Client, type WorkflowClientInterceptor } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AckRecord } from '../../contracts';
import { handrailDataConverter } from '../../src/codec';
import { decide, getJob, startJob, watchJob, type JobView } from '../../src/operator/client';
import { jobRequest, startRail, waitForStatus, type Rail } from '../helpers/rail';

/** A client on the rail's connection that counts describes and queries (by query name). */
function countingClient(rail: Rail) {
  const calls: Record<string, number> = {};
  const count = (name: string) => (calls[name] = (calls[name] ?? 0) + 1);
  const counter: WorkflowClientInterceptor = {
    describe: (input, next) => (count('describe'), next(input)),
    query: (input, next) => (count(`query ${input.queryType}`), next(input)),
  };
  const client = new Client({
    connection: rail.client.connection,
    namespace: rail.client.options.namespace,
    dataConverter: handrailDataConverter(),
    interceptors: { workflow: [counter] },
  });
  return { client, calls, reset: () => Object.keys(calls).forEach((k) => delete calls[k]) };
}

/** Follows to the end, collecting every ack yielded. */
async function followToEnd(
  progress: AsyncGenerator<{ acks: AckRecord[] }, JobView>,
): Promise<{ yielded: AckRecord[]; final: JobView }> {
  const yielded: AckRecord[] = [];
  for (;;) {
    const next = await progress.next();
    if (next.done) return { yielded, final: next.value };
    yielded.push(...next.value.acks);
  }
}

describe('watchJob polls the status query, not describe', () => {
  let rail: Rail;
  beforeAll(async () => {
    // A retrieve that holds each job a second keeps it running over many polls, on any machine.
    rail = await startRail({
      activities: (real) => ({
        retrieve: async (work) => (await new Promise((r) => setTimeout(r, 1_000)), real.retrieve(work)),
      }),
    });
  });
  afterAll(async () => {
    await rail?.stop();
  });

  it('a followed job is described once at the start and read once at the end, whatever the number of status polls; every ack is yielded once', async () => {
    const { client, calls } = countingClient(rail);
    const request = jobRequest();
    await startJob(rail.client, request, rail);
    const { yielded, final } = await followToEnd(watchJob(client, request.job_id, { pollMs: 5 }));

    expect(final.status.status).toBe('completed');
    expect(yielded).toEqual(final.acks);
    expect(calls.describe).toBe(2);
    // Far more polls than describes: retrieve alone holds the job a second, polled every 5 ms.
    expect(calls['query status']).toBeGreaterThan(10);
    expect(calls['query acks'] ?? 0).toBeLessThanOrEqual(calls['query status']!);
    expect(calls['query package'] ?? 0).toBe(0);
  });

  it('following on from a view read before a decision describes nothing more until the job ends, and yields only the acks after it', async () => {
    const request = jobRequest({ budget: { usd: 0.005, revisions: 1 } });
    const { handle } = await startJob(rail.client, request, rail);
    await waitForStatus(handle, 'escalated');
    const { client, calls, reset } = countingClient(rail);
    const before = await getJob(client, request.job_id);
    await decide(client, request.job_id, { action: 'top_up', actor: 'ops.lead', usd: 1 });
    reset();
    const { yielded, final } = await followToEnd(watchJob(client, request.job_id, { after: before, pollMs: 5 }));

    expect(final.status.status).toBe('completed');
    expect(yielded).toEqual(final.acks.slice(before.acks.length));
    // The one describe reads the ended job.
    expect(calls.describe).toBe(1);
  });
});
