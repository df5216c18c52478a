// The long relay's pipeline: ticket triage's own stages and table, except that a failing verdict
// goes back to the drafter over an edge bounded by a number of rounds instead of the wallet's
// revisions, so one job can take thousands of hops. Pure (the rail imports it into the sandbox).
import { definePipeline, isFanOutRule, type RouteRule } from '../../contracts';
import { ticketEntry } from '../../contracts/pipelines/ticket-entry';
import { ticketTriage } from '../../contracts/pipelines/ticket-triage';

/** Rounds of draft → judge the revisit edges allow: enough for a relay of 2,000 hops. */
export const MAX_ROUNDS = 1_000;

/** The reference table with the revision no longer spent on a failing verdict. */
const unpaidLoop = (rule: RouteRule): RouteRule =>
  isFanOutRule(rule) || !('spendsRevision' in rule) ? rule : { ...rule, spendsRevision: false };

export const longCritique = definePipeline({
  name: 'long-critique',
  description: 'Ticket triage whose critique loop is bounded by rounds, not revisions (long-job bench and tests).',
  stages: [...ticketTriage.cards],
  routes: ticketTriage.routes.map(unpaidLoop),
  revisits: [
    { from: 'judge', to: 'draft', bound: { max: MAX_ROUNDS } },
    { from: 'draft', to: 'judge', bound: { max: MAX_ROUNDS } },
  ],
  entry: ticketEntry,
  reviser: ticketTriage.reviser,
});

/** The worker's pipelines: the reference (the human-driven job) and the long relay. */
export const LONG_JOB_PIPELINES = [ticketTriage, longCritique] as const;
