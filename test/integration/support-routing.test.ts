/**
 * The support-routing pipeline end to end inside the rail, on the real dev server: a job that
 * names `pipeline: 'support-routing'` is classified, routed by the table to one specialist,
 * reviewed and written to the CRM once.
 */
import type { TicketJobRequest } from '../../contracts/pipelines/ticket-artifacts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatTranscript, TRANSCRIPT_SEPARATOR } from '../../contracts';
import { readLog } from '../../activities/transcript-log';
import { startJob } from '../../src/operator/client';
import { jobRequest, scheduledActivities, startRail, uniqueId, type Rail } from '../helpers/rail';

let rail: Rail;
beforeAll(async () => {
  rail = await startRail();
});
afterAll(async () => {
  await rail?.stop();
});

function supportJob(subject: string, body: string): TicketJobRequest {
  const id = uniqueId('route');
  const base = jobRequest({ job_id: id });
  return { ...base, pipeline: 'support-routing', ticket: { ...base.ticket, id: `tkt_${id}`, subject, body } };
}

describe('support-routing on the real dev server', () => {
  it('routes an angry ticket classify → escalation → review → crm-note and marks it needs_human in the CRM', async () => {
    const request = supportJob(
      'Logged out AGAIN',
      'This is UNACCEPTABLE!! The app logs me out every hour. Why is this still broken?',
    );
    const { handle } = await startJob(rail.client, request, rail);
    const result = await handle.result();

    expect(result.status).toBe('completed');
    expect(result.acks.map((a) => `${a.stage}:${a.ack}`)).toEqual([
      'classify:accepted',
      'escalation:accepted',
      'review:accepted',
      'crm-note:accepted',
    ]);
    expect(result.package.artifacts.map((a) => a.type)).toEqual([
      'ticket.raw',
      'classification.v1',
      'summary_md',
      'verdict.v1',
      'receipt.v1',
    ]);
    expect(result.package.hop?.chain).toEqual(['client', 'classify', 'escalation', 'review', 'crm-note']);
    expect(result.receipt).toMatchObject({
      write_key: `${request.job_id}:crm-note:receipt.v1`,
      reference: `crm_tickets/${request.ticket.id}`,
      system: 'crm',
      status: 'created',
    });
    expect(await rail.store.listWrites(request.job_id)).toHaveLength(1);
    expect(await rail.store.getCrmTicket(request.ticket.id)).toMatchObject({
      status: 'needs_human',
      note: expect.stringContaining('Why is this still broken?'),
    });
    expect(await scheduledActivities(rail.client, request.job_id)).toEqual([
      'classify',
      'escalation',
      'review',
      'crm-note',
    ]);

    // classify → escalation hands over classify's turn as a transcript before escalation's question;
    // escalation → review has no handover (review starts clean, with the package only).
    const turns = (await readLog(rail.store, result.package, request.job_id)).turns;
    const [classify, escalation, review] = turns;
    expect(escalation!.handover).toMatchObject({ used: 'transcript_prepend', history: [] });
    expect(
      escalation!.handover!.question_text.startsWith(`${formatTranscript(classify!.messages)}${TRANSCRIPT_SEPARATOR}`),
    ).toBe(true);
    expect(escalation!.handover!.question_text).toContain('[__user__] Logged out AGAIN');
    expect(review!.handover).toBeUndefined();
  });

  it('routes a billing ticket to billing', async () => {
    const request = supportJob('Invoice', 'I was charged twice on my invoice this month. Can you check the charge?');
    const result = await (await startJob(rail.client, request, rail)).handle.result();

    expect(result.status).toBe('completed');
    expect(result.acks.map((a) => a.stage)).toEqual(['classify', 'billing', 'review', 'crm-note']);
    expect(result.package.hop?.chain).toEqual(['client', 'classify', 'billing', 'review', 'crm-note']);
    expect(result.receipt?.reference).toBe(`crm_tickets/${request.ticket.id}`);
    expect((await rail.store.getCrmTicket(request.ticket.id))?.status).toBe('triaged');
  });
});
