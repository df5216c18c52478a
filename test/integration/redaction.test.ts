/**
 * The `redact personal data` constraint on the real dev server: a ticket carrying an email, a
 * phone number and a card number ends with a summary and a CRM note that hold none of them; a
 * drafter that leaves them in is refused by the rail (constraints_enforced), and the refusal
 * does not repeat them.
 */
import type { TicketJobRequest } from '../../contracts/pipelines/ticket-artifacts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SummaryMd } from '../../contracts';
import { readArtifactBody } from '../../activities/artifacts';
import { startJob } from '../../src/operator/client';
import { jobRequest, scheduledActivities, startRail, uniqueId, type Rail } from '../helpers/rail';

const EMAIL = 'jane.doe@example.com';
const PHONE = '+1 415 555 0132';
const CARD = '4111 1111 1111 1111';
const PERSONAL = /jane\.doe|example\.com|415 555|555 0132|4111 1111/;

let rail: Rail;
beforeAll(async () => {
  rail = await startRail({
    // A drafter that puts the customer's email back into its summary, for jobs named "leaky-…".
    activities: (real) => ({
      draft: async (work) => {
        const result = await real.draft(work);
        if (!work.package.job_id.startsWith('leaky-')) return result;
        const body = result.body as SummaryMd;
        return { ...result, body: { ...body, markdown: `${body.markdown}\n\nCustomer email: ${EMAIL}` } };
      },
    }),
  });
});
afterAll(async () => {
  await rail?.stop();
});

function personalTicketJob(prefix: string): TicketJobRequest {
  const id = uniqueId(prefix);
  const base = jobRequest({ job_id: id });
  // No "?" in the body, so the subject is the question the summary quotes (intake reads the
  // question as the first sentence ending in "?", and cuts sentences at dots).
  return {
    ...base,
    // A job that breaks the constraint escalates; it then ends at once rather than waiting for a human.
    decision_timeout: '1s',
    constraints: [...base.constraints, 'redact personal data'],
    ticket: {
      ...base.ticket,
      subject: `Duplicate charge refund, card ${CARD} (${EMAIL}, ${PHONE})`,
      body: `I upgraded to the annual plan yesterday and my card ${CARD} was charged twice. Please refund the duplicate charge. Reach me at ${EMAIL} or ${PHONE}.`,
    },
  };
}

describe('redact personal data on the real dev server', () => {
  it('a ticket with an email, a phone and a card number ends with a summary and a CRM note holding none of them', async () => {
    const request = personalTicketJob('redact');
    const { handle } = await startJob(rail.client, request, rail);
    const result = await handle.result();
    expect(result.status).toBe('completed');

    const summaryRef = result.package.artifacts.filter((a) => a.type === 'summary_md').at(-1)!;
    const summary = (await readArtifactBody(rail.store, summaryRef, SummaryMd)).markdown;
    expect(summary).toContain('> Duplicate charge refund, card [card] ([email], [phone])');
    const crm = await rail.store.getCrmTicket(request.ticket.id);
    expect(crm?.note).toBe(summary);
    for (const text of [summary, crm!.note, result.package.summary ?? '', JSON.stringify(result.acks)])
      expect(text).not.toMatch(PERSONAL);
  });

  it('a drafter that leaves personal data in is refused by the rail, and the refusal names it obscured', async () => {
    const request = personalTicketJob('leaky');
    const { handle } = await startJob(rail.client, request, rail);
    const result = await handle.result();
    expect(result.status).toBe('escalated');
    const rejection = result.acks.find((a) => a.ack === 'rejected_invariant');
    expect(rejection).toMatchObject({ stage: 'draft', invariant: 'constraints_enforced' });
    expect(rejection?.reason).toBe(
      'constraints_enforced: redact_personal_data: leaves personal data unmasked: email j***@e***.com',
    );
    expect(JSON.stringify(result.acks)).not.toMatch(PERSONAL);
    expect(await scheduledActivities(rail.client, request.job_id)).not.toContain('writeback');
    expect(await rail.store.getCrmTicket(request.ticket.id)).toBeNull();
  });
});
