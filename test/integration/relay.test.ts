/**
 * The reference pipeline end to end inside the rail, on the real dev server, with the store on
 * each backend: embedded SQLite and PostgreSQL (the same schema and semantics on both).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startJob } from '../../src/operator/client';
import { defaultPayloadConverter } from '@temporalio/common';
import { LIMITS, splitSummary, type StageWork } from '../../contracts';
import { readSummarySegments } from '../../activities/summary';
import type { StageHopRequest, StageHopResult } from '../../workflows/stage-hop';
import { jobRequest, scheduledActivities, startRail, uniqueId, type Rail } from '../helpers/rail';
import { openFresh, storeBackends } from '../helpers/store-backends';

for (const backend of storeBackends()) {
  describe.skipIf(backend.skip)(
    `relay with the store on ${backend.name}${backend.skip ? ` (skipped: ${backend.skip})` : ''}`,
    () => {
      let rail: Rail;
      beforeAll(async () => {
        rail = await startRail({ store: await openFresh(backend) });
      });
      afterAll(async () => {
        await rail?.stop();
        await rail?.store.close();
      });

      it('relays a ticket intake → retrieve → draft → judge → writeback and writes the CRM once', async () => {
        const request = jobRequest();
        const { handle, created } = await startJob(rail.client, request, rail);
        expect(created).toBe(true);
        const result = await handle.result();

        expect(result.status).toBe('completed');
        expect(result.acks.map((a) => `${a.stage}:${a.ack}`)).toEqual([
          'intake:accepted',
          'retrieve:accepted',
          'draft:accepted',
          'judge:accepted',
          'writeback:accepted',
        ]);
        expect(result.package.artifacts.map((a) => a.type)).toEqual([
          'ticket.raw',
          'intake.v1',
          'chunks.v1',
          'summary_md',
          'verdict.v1',
          'receipt.v1',
        ]);
        expect(result.receipt?.write_key).toBe(`${request.job_id}:writeback:receipt.v1`);
        expect(result.package.evaluator.last_verdict).toBe('pass');
        expect(result.spent_usd).toBeGreaterThan(0);
        expect(result.package.budget.usd_remaining).toBeCloseTo(request.budget.usd - result.spent_usd, 6);
        expect(new Set(result.acks.map((a) => a.traceparent)).size).toBe(1);
        expect(await rail.store.listWrites(request.job_id)).toHaveLength(1);
        // The ticket's CRM record, changed once, by this job's write.
        expect(await rail.store.getCrmTicket(request.ticket.id)).toMatchObject({
          status: 'triaged',
          revision: 1,
          updated_by: `${request.job_id}:writeback:receipt.v1`,
        });
        expect(await scheduledActivities(rail.client, request.job_id)).toEqual([
          'intake',
          'retrieve',
          'draft',
          'judge',
          'writeback',
        ]);
        // The accumulated summary: each stage's own segment, in order, separated by ---hop---; the
        // oldest behind a reference once past LIMITS.summaryKept, read back from the store.
        expect(result.package.summary!.length).toBeLessThanOrEqual(LIMITS.summaryKept);
        const [reference, ...newest] = splitSummary(result.package.summary);
        expect(reference).toMatch(/^\[earlier hops: handrail:\/\/summaries\//);
        const segments = await readSummarySegments(rail.store, result.package.summary);
        expect(newest).toEqual(segments.slice(-newest.length));
        expect(segments).toHaveLength(5);
        expect(segments.map((s) => s.split(':', 1)[0])).toEqual([
          'hop 0 intake → intake.v1',
          'hop 1 retrieve → chunks.v1',
          'hop 2 draft → summary_md',
          'hop 3 judge → verdict.v1',
          'hop 4 writeback → receipt.v1',
        ]);
        expect(segments[0]).toMatch(/^hop 0 intake → intake\.v1: intent \w+, risk \w+, language en(?:, open: [^;]+)?$/);
        expect(segments[3]).toBe('hop 3 judge → verdict.v1: verdict pass');
        expect(segments[4]).toBe(
          `hop 4 writeback → receipt.v1: CRM note written to record crm_tickets/${request.ticket.id} (created; ticket ${request.ticket.id} triaged)`,
        );
      });

      it("a writeback delivered again through stageHop after the job completed writes nothing more: a direct delivery is not the job's rail", async () => {
        const request = jobRequest();
        const { handle } = await startJob(rail.client, request, rail);
        expect((await handle.result()).status).toBe('completed');
        // The package writeback received (its wallet and summary exactly), read from the history,
        // sent again as judge emitted it: the rail's hop block back at judge.
        const history = await handle.fetchHistory();
        const scheduled = history.events!.find(
          (e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'writeback',
        )!;
        const delivered = (
          defaultPayloadConverter.fromPayload(
            scheduled.activityTaskScheduledEventAttributes!.input!.payloads![0]!,
          ) as StageWork
        ).package;
        const judged = {
          ...delivered,
          hop: { ...delivered.hop!, to: 'judge', chain: delivered.hop!.chain.slice(0, -1) },
        };
        const again = await rail.client.workflow.execute<(r: StageHopRequest) => Promise<StageHopResult>>('stageHop', {
          taskQueue: rail.taskQueue,
          workflowId: uniqueId('redeliver'),
          args: [{ stage: 'writeback', package: judged }],
        });
        expect(again.artifact).toBeUndefined();
        expect(again.failure).toMatch(/was not recorded for job/);
        expect(await rail.store.listWrites(request.job_id)).toHaveLength(1);
      });
    },
  );
}
