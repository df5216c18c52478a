/**
 * handoffJob on the real dev server: guardrails in the middle of the relay, the hop cap, human
 * decisions (approve, top-up, timeout), cancellation and the job-id policy.
 */
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SummaryMd } from '../../contracts';
import { cancelJob, getJob, startJob } from '../../src/operator/client';
import { decideUpdate, statusQuery } from '../../workflows/definitions';
import { HandrailStatus } from '../../workflows/search-attributes';
import { SCENARIOS } from '../scenarios';
import {
  jobRequest,
  scheduledActivities,
  startRail,
  uniqueId,
  upsertedValues,
  waitForStatus,
  type Rail,
} from '../helpers/rail';

let rail: Rail;
let guarded: Rail;
/** A drafter that takes 8 s: long enough to look at the job while the draft runs. */
let slowDraft: Rail;

beforeAll(async () => {
  rail = await startRail();
  // A drafter that slips a refund promise into its output, in the middle of the relay: the rail
  // checks constraints at every hop, not only at the first and last stage.
  guarded = await startRail({
    activities: (real) => ({
      draft: async (work) => {
        const result = await real.draft(work);
        const body = result.body as SummaryMd;
        return {
          ...result,
          body: { ...body, markdown: `${body.markdown}\n\nGood news: we will refund you in full today.` },
        };
      },
    }),
  });
});
afterAll(async () => {
  await rail?.stop();
  await guarded?.stop();
  await slowDraft?.stop();
});

/** The validator's message of a refused update (the Web UI shows the same text). */
async function refusal(update: Promise<unknown>): Promise<string> {
  const err = await update.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(WorkflowUpdateFailedError);
  return (err as WorkflowUpdateFailedError).cause?.message ?? '';
}

describe('handoffJob on the real dev server', () => {
  it('guardrail gap: a middle stage that breaks a constraint is rejected and the job escalates without writing', async () => {
    const request = jobRequest({ decision_timeout: '1s' });
    const { handle } = await startJob(guarded.client, request, guarded);
    const result = await handle.result();
    expect(result.status).toBe('escalated');
    const rejection = result.acks.find((a) => a.ack === 'rejected_invariant');
    expect(rejection?.stage).toBe('draft');
    expect(rejection?.invariant).toBe('constraints_enforced');
    expect(rejection?.reason).toMatch(/refund/);
    expect(await scheduledActivities(guarded.client, request.job_id)).not.toContain('writeback');
    expect(await guarded.store.listWrites(request.job_id)).toHaveLength(0);
  });

  it('hop cap: past max_hops the job escalates to a human, and approve resumes it to completion', async () => {
    const request = jobRequest({ max_hops: 3 });
    const { handle } = await startJob(rail.client, request, rail);
    const waiting = await waitForStatus(handle, 'escalated');
    expect(waiting.stage).toBe('human');
    expect(waiting.last_ack?.stage).toBe('human');
    expect(waiting.escalation?.reasons.join(' ')).toMatch(/exceeds the cap of 3 hops/);
    expect(waiting.escalation?.options).toContain('approve');

    const receipt = await handle.executeUpdate(decideUpdate, {
      args: [{ action: 'approve', actor: 'ops.lead', note: 'fine to write' }],
    });
    expect(receipt.action).toBe('approve');
    const result = await handle.result();
    expect(result.status).toBe('completed');
    expect(result.acks.map((a) => a.ack)).toContain('max_hops_exceeded');
    const write = result.acks.find((a) => a.stage === 'writeback' && a.ack === 'accepted');
    expect(write?.actor).toBe('ops.lead');
    expect(await rail.store.listWrites(request.job_id)).toHaveLength(1);
  });

  it('top-up: an empty wallet escalates with rejected_budget; the update validator refuses a top-up of nothing; a top-up resumes the job', async () => {
    // intake and retrieve fit in $0.005; draft does not.
    const request = jobRequest({ budget: { usd: 0.005, revisions: 1 } });
    const { handle } = await startJob(rail.client, request, rail);
    const waiting = await waitForStatus(handle, 'escalated');
    expect(waiting.escalation?.reasons.join(' ')).toMatch(/wallet has/);
    expect((await handle.query(statusQuery)).last_ack?.ack).toBe('accepted');

    expect(
      await refusal(handle.executeUpdate(decideUpdate, { args: [{ action: 'top_up', actor: 'ops.lead' }] })),
    ).toMatch(/top_up needs usd > 0 or revisions > 0/);
    expect(
      await refusal(handle.executeUpdate(decideUpdate, { args: [{ action: 'top_up', actor: '', usd: 1 }] })),
    ).toMatch(/actor/);

    await handle.executeUpdate(decideUpdate, { args: [{ action: 'top_up', actor: 'ops.lead', usd: 1 }] });
    const result = await handle.result();
    expect(result.status).toBe('completed');
    expect(result.acks.some((a) => a.ack === 'rejected_budget' && a.stage === 'draft')).toBe(true);
    const resumed = result.acks.find((a) => a.stage === 'draft' && a.ack === 'accepted');
    expect(resumed?.actor).toBe('ops.lead');
    const decision = result.acks.find((a) => a.stage === 'human' && a.actor === 'ops.lead');
    expect(decision?.reason).toBe('decided top_up (+$1, +0 revisions) by ops.lead');
    // The wallet only grew by the top-up: start + top-up − spent.
    expect(result.package.budget.usd_remaining).toBeCloseTo(0.005 + 1 - result.spent_usd, 6);
  });

  it(
    'a decided escalation leaves the Web UI\'s "escalated" list at once, not after the next hop',
    { timeout: 60_000 },
    async () => {
      slowDraft ??= await startRail({
        activities: (real) => ({
          draft: async (work) => {
            await new Promise((r) => setTimeout(r, 8_000));
            return real.draft(work);
          },
        }),
      });
      const request = jobRequest({ budget: { usd: 0.005, revisions: 1 } });
      const { handle } = await startJob(slowDraft.client, request, slowDraft);
      await waitForStatus(handle, 'escalated');
      expect((await handle.describe()).typedSearchAttributes.get(HandrailStatus)).toBe('escalated');

      await handle.executeUpdate(decideUpdate, { args: [{ action: 'top_up', actor: 'ops.lead', usd: 1 }] });
      // The 8 s draft is running now; the status attribute must already say so.
      let seen: string | undefined;
      for (
        const deadline = Date.now() + 6_000;
        Date.now() < deadline && seen !== 'running';
        await new Promise((r) => setTimeout(r, 100))
      ) {
        seen = (await handle.describe()).typedSearchAttributes.get(HandrailStatus);
      }
      expect(seen).toBe('running');
      expect((await handle.query(statusQuery)).stage).toBe('draft');
      expect((await handle.result()).status).toBe('completed');
    },
  );

  it('decision timeout: an escalation nobody decides ends the job as escalated with the reason', async () => {
    const request = jobRequest({ budget: { usd: 0.005, revisions: 1 }, decision_timeout: '2s' });
    const { handle } = await startJob(rail.client, request, rail);
    const result = await handle.result();
    expect(result.status).toBe('escalated');
    expect(result.reason).toMatch(/no decision within 2s/);
    expect(await rail.store.listWrites(request.job_id)).toHaveLength(0);
  });

  it('cancellation: a cancelled job ends with status cancelled and no write', async () => {
    const request = jobRequest({ budget: { usd: 0.005, revisions: 1 } });
    const { handle } = await startJob(rail.client, request, rail);
    await waitForStatus(handle, 'escalated');
    await handle.cancel();
    const result = await handle.result();
    expect(result.status).toBe('cancelled');
    expect(await rail.store.listWrites(request.job_id)).toHaveLength(0);
  });

  it('terminated while escalated: the job ended as Temporal says, not as the escalated it last published', async () => {
    const request = jobRequest({ budget: { usd: 0.005, revisions: 1 } });
    const { handle } = await startJob(rail.client, request, rail);
    await waitForStatus(handle, 'escalated');
    await handle.terminate('test over');
    await expect(cancelJob(rail.client, request.job_id)).rejects.toThrow(
      `job "${request.job_id}" already ended (terminated)`,
    );
    // Read back, the job says what Temporal says, with the package and acks it held.
    const view = await getJob(rail.client, request.job_id);
    expect(view.status.status).toBe('terminated');
    expect(view.status.escalation).toBeUndefined();
    expect(view.acks.at(-1)?.stage).toBe('human');
  });

  it('cancelled during its write: the write finishes, and the job publishes its ending once, cancelled, never completed first', async () => {
    const scenario = SCENARIOS.find((s) => s.name === 'cancel-during-write')!;
    const own = await startRail({ store: rail.store, activities: scenario.activities });
    try {
      const { workflowId, result } = await scenario.run(own, uniqueId('cancel-write'));
      expect(scenario.check(result)).toBeUndefined();
      const handle = own.client.workflow.getHandle(workflowId);
      expect(upsertedValues((await handle.fetchHistory()).events ?? [], HandrailStatus.name)).toEqual(['cancelled']);
      // The run closes Completed, so its result keeps the write's receipt (a run closed Canceled
      // carries no result); `HandrailStatus` says cancelled (docs/operate.md).
      const described = await handle.describe();
      expect([described.status.name, described.typedSearchAttributes.get(HandrailStatus)]).toEqual([
        'COMPLETED',
        'cancelled',
      ]);
    } finally {
      await own.stop();
    }
  });

  it('job id policy: starting the same job id again attaches to the existing job, running or completed', async () => {
    const request = jobRequest();
    const first = await startJob(rail.client, request, rail);
    const again = await startJob(rail.client, request, rail);
    expect(first.created).toBe(true);
    expect(again.created).toBe(false);
    await first.handle.result();
    const afterwards = await startJob(rail.client, request, rail);
    expect(afterwards.created).toBe(false);
    const runs = [];
    for await (const w of rail.client.workflow.list({ query: `WorkflowId = '${request.job_id}'` })) runs.push(w.runId);
    expect(runs).toHaveLength(1);
    expect(await rail.store.listWrites(request.job_id)).toHaveLength(1);
  });

  it('a ticket asking "Your refund has been approved, right?" under "no refund promises" completes: quoting the customer promises nothing', async () => {
    const base = jobRequest({ constraints: ['no refund promises'] });
    const request = {
      ...base,
      ticket: { ...base.ticket, body: 'I was told on the phone. Your refund has been approved, right?' },
    };
    const { handle } = await startJob(rail.client, request, rail);
    const result = await handle.result();
    expect(result.status, result.reason).toBe('completed');
    expect(result.acks.filter((a) => a.ack !== 'accepted')).toEqual([]);
  });

  it('a malformed request started around the client fails closed at once, naming the field, with no stage activity', async () => {
    const request = {
      ...jobRequest({ decision_timeout: '1s' }),
      traceparent: '00-00000000000000000000000000000000-0000000000000000-01',
    };
    const handle = await rail.client.workflow.start('handoffJob', {
      taskQueue: rail.taskQueue,
      workflowId: request.job_id,
      args: [request],
    });
    await expect(handle.result()).rejects.toMatchObject({
      cause: { type: 'InvalidJobRequest', message: expect.stringMatching(/traceparent/) },
    });
    expect(await scheduledActivities(rail.client, request.job_id)).toEqual([]);
  });
});
