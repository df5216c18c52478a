/**
 * A hub with parallel specialists: intake, then `policy` (help-center evidence) and
 * `account` (the customer's earlier tickets) at once, each owning its own output types; the rail
 * merges their artifacts into one `context.v1`, from which `brief` drafts the summary that
 * ticket-triage's judge and writeback judge and write. Its stage work lives in
 * activities/ticket-hub/ (intake, judge and writeback are ticket-triage's cards, so its activities).
 */
import { defineStage, definePipeline } from '../rail';
import { ticketEntry } from './ticket-entry';
import { intakeStage, judgeStage, judgedWriteback, writebackStage } from './ticket-triage';

/** The rail's merge of the specialists' artifacts (a `MergedBranches` body). */
export const CONTEXT = 'context.v1';
/** The account specialist's output: the customer's earlier tickets (`AccountHistoryV1`). */
export const ACCOUNT_HISTORY = 'account_history.v1';

export const policyStage = defineStage({
  name: 'policy',
  accepts: ['intake.v1'],
  outputs: ['chunks.v1', 'no_hit.v1'],
  tools: [{ name: 'helpcenter.search', access: 'read', system: 'helpcenter' }],
  criteria: ['every chunk carries a citation key, or no_hit'],
  nominalCostUsd: 0.002,
  worstCaseCostUsd: 0.004,
  activity: { startToCloseTimeout: '15s' },
});

export const accountStage = defineStage({
  name: 'account',
  accepts: ['intake.v1'],
  outputs: [ACCOUNT_HISTORY],
  tools: [{ name: 'crm.read', access: 'read', system: 'crm' }],
  criteria: [
    "only this customer's earlier tickets, never the ticket in hand",
    'an empty history said as such, never invented',
  ],
  nominalCostUsd: 0.001,
  worstCaseCostUsd: 0.002,
  // Room for a model call (what the earlier tickets have in common); heartbeats notice a crash sooner.
  activity: { startToCloseTimeout: '30s' },
});

export const briefStage = defineStage({
  name: 'brief',
  // verdict.v1 arrives when the judge failed the previous brief: that is the revision input.
  accepts: [CONTEXT, 'verdict.v1'],
  outputs: ['summary_md'],
  criteria: [
    'cites chunk keys (or says no_match)',
    "states the customer's earlier tickets",
    'no refund promises',
    'differs from every rejected draft',
  ],
  nominalCostUsd: 0.01,
  worstCaseCostUsd: 0.02,
  activity: { startToCloseTimeout: '2m' },
});

const hubEnd = judgedWriteback('brief');

export const ticketHub = definePipeline({
  name: 'ticket-hub',
  description:
    'Research a support ticket with two specialists in parallel (help center, account history), then draft, judge and write the CRM note.',
  entry: ticketEntry,
  stages: [intakeStage, policyStage, accountStage, briefStage, judgeStage, writebackStage],
  routes: [
    { after: 'ticket.raw', to: 'intake', reason: 'new ticket' },
    {
      after: 'intake.v1',
      fanOut: ['policy', 'account'],
      merge: CONTEXT,
      reason: 'research the help center and the account at once',
    },
    { after: CONTEXT, to: 'brief', reason: 'draft from the merged research' },
    ...hubEnd.routes,
  ],
  revisits: hubEnd.revisits,
  reviser: hubEnd.reviser,
});
