/**
 * Conditional routing: `classify` scores a ticket (intent, sentiment, complexity,
 * language), then a pure routing table hands it to exactly one specialist; `review` (the critic)
 * checks the specialist's note and `crm-note`, the single writer, puts it in the CRM. Defined only
 * through the public contracts, like any author's pipeline; the stage work lives in
 * activities/support-routing/.
 */
import { defineStage, definePipeline, type RouteFacts, type RouteRule } from '../rail';
import { ticketEntry } from './ticket-entry';

/** The classify stage's output: ticket ids, question, intent, sentiment 0..1, complexity 0..10, language. */
export const CLASSIFICATION = 'classification.v1';

/** Below this sentiment (0 = furious, 1 = delighted) a human takes the ticket. */
export const ESCALATE_BELOW_SENTIMENT = 0.3;
/** Above this complexity (0..10) the senior agent takes the ticket. */
export const SENIOR_ABOVE_COMPLEXITY = 8;
export const BILLING_INTENTS: readonly string[] = ['billing', 'refund'];

export const classifyStage = defineStage({
  name: 'classify',
  accepts: ['ticket.raw'],
  outputs: [CLASSIFICATION],
  tools: [{ name: 'tickets.read', access: 'read', system: 'ticketing' }],
  criteria: [
    'ticket_id and customer_id present, never invented',
    'intent, sentiment 0..1, complexity 0..10 and language set by fixed rules',
  ],
  nominalCostUsd: 0.001,
  activity: { startToCloseTimeout: '10s' },
});

const specialist = <const N extends string>(name: N, angle: string) =>
  defineStage({
    name,
    accepts: [CLASSIFICATION],
    outputs: ['summary_md'],
    criteria: [angle, 'restates the customer question', 'no refund promises'],
    nominalCostUsd: 0.002,
    activity: { startToCloseTimeout: '30s' },
  });

export const billingStage = specialist('billing', 'billing and refund questions: invoices, charges, the refund policy');
export const escalationStage = specialist(
  'escalation',
  'unhappy customers: hand the ticket to a human with the context',
);
export const seniorStage = specialist('senior', 'complex tickets: every question and technical signal listed');
export const multilingualStage = specialist('multilingual', 'tickets not in English: reply in the customer language');
export const generalStage = specialist('general', 'everything the other specialists do not take');

export const reviewStage = defineStage({
  name: 'review',
  role: 'critic',
  accepts: ['summary_md'],
  outputs: ['verdict.v1'],
  criteria: ['note non-empty and within length', 'no refund promises', 'no breach of the job constraints'],
  nominalCostUsd: 0.001,
  activity: { startToCloseTimeout: '30s' },
});

export const crmNoteStage = defineStage({
  name: 'crm-note',
  role: 'writer',
  accepts: ['verdict.v1'],
  outputs: ['receipt.v1'],
  tools: [{ name: 'crm.patch', access: 'write', system: 'crm' }],
  writes: 'crm',
  reconcile: 'idempotent',
  criteria: [
    'idempotent upsert keyed job_id:stage:artifact_type',
    'runs only behind a passing verdict on the latest note',
  ],
  nominalCostUsd: 0.001,
  // The write is keyed, so retrying is safe.
  activity: { startToCloseTimeout: '30s', retry: { maximumAttempts: 5 } },
});

/** A score from the classification body the rail recorded; NaN when missing or not a number, so
 * that no threshold matches a bad body (it never escalates or goes senior by accident). */
function score(facts: RouteFacts, field: 'sentiment' | 'complexity'): number {
  const value = facts.body(CLASSIFICATION)?.[field];
  return typeof value === 'number' ? value : NaN;
}

function label(facts: RouteFacts, field: 'intent' | 'language'): string | undefined {
  const value = facts.body(CLASSIFICATION)?.[field];
  return typeof value === 'string' ? value : undefined;
}

/**
 * The routing table, first match wins: the specialist rules go from the most urgent (an unhappy
 * customer is escalated whatever else the ticket is) to the most general.
 *
 * A failing review has no route on purpose, so the job escalates to a human: the specialists are
 * deterministic templates, and running one again would write the very note the review refused
 * (which the rail rejects as a reused artifact). Without a classification body (nothing to route
 * on) the job escalates too, instead of guessing "general".
 */
export const SUPPORT_ROUTES: readonly RouteRule[] = [
  { after: 'ticket.raw', to: 'classify', reason: 'new ticket: classify it' },
  {
    after: CLASSIFICATION,
    when: (f) => score(f, 'sentiment') < ESCALATE_BELOW_SENTIMENT,
    to: 'escalation',
    reason: `unhappy customer (sentiment < ${ESCALATE_BELOW_SENTIMENT})`,
    handoff: 'escalation',
  },
  {
    after: CLASSIFICATION,
    when: (f) => score(f, 'complexity') > SENIOR_ABOVE_COMPLEXITY,
    to: 'senior',
    reason: `complex ticket (complexity > ${SENIOR_ABOVE_COMPLEXITY})`,
    // Complex tickets (complexity > 8) escalate; the senior agent is that escalation.
    handoff: 'escalation',
  },
  {
    after: CLASSIFICATION,
    when: (f) => BILLING_INTENTS.includes(label(f, 'intent') ?? ''),
    to: 'billing',
    reason: 'billing or refund question',
    handoff: 'specialization',
  },
  {
    after: CLASSIFICATION,
    when: (f) => ![undefined, 'en', 'und'].includes(label(f, 'language')?.split('-')[0]),
    to: 'multilingual',
    reason: 'customer writes in another language than English',
    handoff: 'specialization',
  },
  {
    after: CLASSIFICATION,
    when: (f) => f.body(CLASSIFICATION) !== undefined,
    to: 'general',
    reason: 'no specialist rule matched',
    handoff: 'specialization',
  },
  // A specialist cannot judge its own note: the critic's capability.
  { after: 'summary_md', to: 'review', reason: 'review the specialist note', handoff: 'capability_boundary' },
  { after: 'verdict.v1', verdict: 'pass', to: 'crm-note', reason: 'review passed: write the CRM note' },
  { after: 'receipt.v1', complete: 'CRM note written' },
];

export const supportRouting = definePipeline({
  name: 'support-routing',
  description:
    'Classify a support ticket and route it to one specialist (billing, escalation, senior, language, general); review the note and write it to the CRM.',
  entry: ticketEntry,
  stages: [
    classifyStage,
    billingStage,
    escalationStage,
    seniorStage,
    multilingualStage,
    generalStage,
    reviewStage,
    crmNoteStage,
  ],
  routes: SUPPORT_ROUTES,
  // A handover on two edges: the escalation note and the senior agent read classify's turn
  // as a transcript (before, resp. after, their own question); every other stage starts clean.
  edges: [
    { from: 'classify', to: 'escalation', handover: 'transcript_prepend' },
    { from: 'classify', to: 'senior', handover: 'transcript_append' },
  ],
});
