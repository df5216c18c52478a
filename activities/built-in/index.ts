/**
 * The activities of the shipped worker's built-in pipelines (contracts/pipelines), each stage
 * named after its card, plus the rail's own (railActivities).
 */
import { ticketHub } from '../../contracts/pipelines/ticket-hub';
import { type ActivityDeps, railActivities } from '../../src';
import { researchBriefActivities } from '../research-brief';
import { supportRoutingActivities } from '../support-routing';
import { ticketHubActivities } from '../ticket-hub';
import { ticketTriageActivities } from '../ticket-triage';

/** Activities for the built-in pipelines (contracts/pipelines). ticket-hub's intake, judge and
 * writeback are ticket-triage's cards: ticket-triage's activities serve them, once. */
export function builtInActivities(deps: ActivityDeps) {
  return {
    ...ticketTriageActivities(deps, [ticketHub]),
    ...supportRoutingActivities(deps),
    ...ticketHubActivities(deps),
    ...researchBriefActivities(deps),
  };
}

export function createActivities(deps: ActivityDeps) {
  return { ...builtInActivities(deps), ...railActivities(deps.store) };
}

/** Every activity of the shipped worker: the built-in pipelines' stages and the rail's own. */
export type HandrailActivities = ReturnType<typeof createActivities>;
export type { ActivityDeps };
