/**
 * The reference pipeline: ticket triage, intake → retrieve → draft → judge →
 * writeback, with the judge able to send a draft back while revisions remain. Its stage work
 * lives in activities/ticket-triage/. Defined only through the public contracts, like any
 * author's pipeline.
 */
import { defineStage, definePipeline, type PipelineSpec } from '../rail';
import { ticketEntry } from './ticket-entry';

export const intakeStage = defineStage({
  name: 'intake',
  accepts: ['ticket.raw'],
  outputs: ['intake.v1'],
  tools: [{ name: 'tickets.read', access: 'read', system: 'ticketing' }],
  criteria: ['ticket_id and customer_id present, never invented', 'question, language, intent, risk, sentiment set'],
  nominalCostUsd: 0.001,
  activity: { startToCloseTimeout: '10s' },
});

export const retrieveStage = defineStage({
  name: 'retrieve',
  accepts: ['intake.v1'],
  outputs: ['chunks.v1', 'no_hit.v1'],
  tools: [{ name: 'helpcenter.search', access: 'read', system: 'helpcenter' }],
  criteria: ['every chunk carries a citation key, or no_hit'],
  nominalCostUsd: 0.002,
  activity: { startToCloseTimeout: '15s' },
});

export const draftStage = defineStage({
  name: 'draft',
  // verdict.v1 arrives when the judge failed the previous draft: that is the revision input.
  accepts: ['chunks.v1', 'no_hit.v1', 'verdict.v1'],
  outputs: ['summary_md'],
  criteria: ['cites chunk keys (or says no_match)', 'no refund promises', 'differs from every rejected draft'],
  nominalCostUsd: 0.01,
  activity: { startToCloseTimeout: '2m' },
});

export const judgeStage = defineStage({
  name: 'judge',
  role: 'critic',
  accepts: ['summary_md'],
  outputs: ['verdict.v1'],
  criteria: [
    'every cited key exists in the chunks',
    'no constraint breaches (refund promises)',
    'length',
    'answers the question',
  ],
  nominalCostUsd: 0.005,
  activity: { startToCloseTimeout: '2m' },
});

export const writebackStage = defineStage({
  name: 'writeback',
  role: 'writer',
  accepts: ['verdict.v1'],
  outputs: ['receipt.v1'],
  tools: [{ name: 'crm.patch', access: 'write', system: 'crm' }],
  writes: 'crm',
  reconcile: 'idempotent',
  criteria: ['idempotent upsert keyed job_id:stage:artifact_type', 'runs only behind a passing verdict'],
  nominalCostUsd: 0.001,
  // The write is keyed, so retrying is safe; give a flaky CRM more chances than the others.
  activity: { startToCloseTimeout: '30s', retry: { maximumAttempts: 5 } },
});

/**
 * The judged write both ticket pipelines end with: the judge takes `drafter`'s summary, a pass is
 * written back, a fail goes back to `drafter` while revisions remain (the critique loop).
 */
export function judgedWriteback(drafter: string): Pick<PipelineSpec, 'routes' | 'revisits' | 'reviser'> {
  return {
    routes: [
      { after: 'summary_md', to: 'judge', reason: 'judge the draft' },
      { after: 'verdict.v1', verdict: 'pass', to: 'writeback', reason: 'verdict pass: write the CRM note' },
      { after: 'verdict.v1', verdict: 'fail', to: drafter, reason: 'revise', spendsRevision: true },
      { after: 'receipt.v1', complete: 'written back' },
    ],
    // Each round of the loop is paid from revisions_remaining.
    revisits: [
      { from: 'judge', to: drafter, bound: 'revisions' },
      { from: drafter, to: 'judge', bound: 'revisions' },
    ],
    reviser: drafter,
  };
}

const triageEnd = judgedWriteback('draft');

export const ticketTriage = definePipeline({
  name: 'ticket-triage',
  description: 'Triage a support ticket into a cited, judged CRM note.',
  entry: ticketEntry,
  stages: [intakeStage, retrieveStage, draftStage, judgeStage, writebackStage],
  routes: [
    { after: 'ticket.raw', to: 'intake', reason: 'new ticket' },
    { after: 'intake.v1', to: 'retrieve', reason: 'find help-center evidence' },
    { after: 'chunks.v1', to: 'draft', reason: 'draft from cited chunks' },
    { after: 'no_hit.v1', to: 'draft', reason: 'draft a no_match summary' },
    ...triageEnd.routes,
  ],
  revisits: triageEnd.revisits,
  reviser: triageEnd.reviser,
});
