/**
 * The built-in pipelines' stage activities, each named after its card (contracts/pipelines). A
 * user of the toolkit like any other: the core never imports this file.
 */
import { ticketHub } from '../contracts/pipelines/ticket-hub';
import type { ActivityDeps } from './deps';

export type { ActivityDeps };
import { railActivities } from './index';
import { supportRoutingActivities } from './support-routing';
import { ticketHubActivities } from './ticket-hub';
import { ticketTriageActivities } from './ticket-triage';

/** ticket-hub's intake, judge and writeback are ticket-triage's cards: ticket-triage's activities
 * serve them, once. */
export function builtInActivities(deps: ActivityDeps) {
  return { ...ticketTriageActivities(deps, [ticketHub]), ...supportRoutingActivities(deps), ...ticketHubActivities(deps) };
}

/** The built-in stages and the rail's own activities: what the shipped worker registers. */
export function createActivities(deps: ActivityDeps) {
  return { ...builtInActivities(deps), ...railActivities(deps.store) };
}

export type HandrailActivities = ReturnType<typeof createActivities>;
