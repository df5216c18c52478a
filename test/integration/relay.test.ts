import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startJob } from '../../src/client';
import { jobRequest, scheduledActivities, startRail, type Rail } from '../helpers/rail';

let rail: Rail;
beforeAll(async () => {
  rail = await startRail();
});
afterAll(async () => {
  await rail?.stop();
});

describe('handoffJob on the real dev server', () => {
  it('relays a ticket intake → retrieve → draft → judge → writeback and writes the CRM once', async () => {
    const request = jobRequest();
    const { handle, created } = await startJob(rail.client, request, rail);
    expect(created).toBe(true);
    const result = await handle.result();

    expect(result.status).toBe('completed');
    expect(result.acks.map((a) => `${a.stage}:${a.ack}`)).toEqual(
      expect.arrayContaining(['intake:accepted', 'retrieve:accepted', 'draft:accepted', 'judge:accepted', 'writeback:accepted']),
    );
    expect(result.receipt?.idempotency_key).toBe(`${request.job_id}:writeback:receipt.v1`);
    expect(result.package.evaluator.last_verdict).toBe('pass');
    expect(result.spent_usd).toBeGreaterThan(0);
    expect(result.package.budget.usd_remaining).toBeCloseTo(request.budget.usd - result.spent_usd, 6);
    expect(new Set(result.acks.map((a) => a.traceparent)).size).toBe(1);
    expect(await rail.store.listWrites(request.job_id)).toHaveLength(1);
    expect(await scheduledActivities(rail.client, request.job_id)).toEqual(expect.arrayContaining(['intake', 'retrieve', 'draft', 'judge', 'writeback']));
  });
});
