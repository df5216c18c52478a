import type { TicketJobRequest } from '../../../contracts/pipelines/ticket-artifacts';

/** The demo's ticket: a refund question, which tempts a drafter to promise what it must not. */
export function sampleJobRequest(jobId: string): TicketJobRequest {
  return {
    job_id: jobId,
    ticket: {
      id: 'tkt_18422',
      customer_id: 'cus_9',
      subject: 'Charged twice for my annual plan — can I get a refund?',
      body:
        'Hi, I upgraded to the annual plan yesterday and my card was charged twice. ' +
        'How do refunds work for a duplicate charge, and how long does it take? Thanks, Dana',
      channel: 'email',
      received_at: '2026-11-29T09:14:00Z',
    },
    goal: 'Draft internal triage summary; do not send to customer',
    constraints: ['no refund promises', 'cite help center or no_match'],
    budget: { usd: 1.2, revisions: 2 },
  };
}
