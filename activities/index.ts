/**
 * The activities of the shipped worker: the built-in pipelines' stages, each named after its
 * card, plus `priorDelivery` (the rail's duplicate lookup). Every stage records its result under
 * the delivery key, so a retried or repeated delivery returns the first result instead of
 * working (or writing) again.
 */
import type { StageResult } from '../contracts/stages';
import type { Store } from '../src/store';
import type { ActivityDeps } from './deps';
import { supportRoutingActivities } from './support-routing';
import { ticketTriageActivities } from './ticket-triage';

export type { ActivityDeps };

/** The rail's own activity: the result recorded for a delivery, or null (a repeat acks `duplicate`). */
export function railActivities(store: Store) {
  return { priorDelivery: ({ delivery_key }: { delivery_key: string }): Promise<StageResult | null> => store.findStageCompletion(delivery_key) };
}

/** Activities for the built-in pipelines (contracts/pipelines). */
export function builtInActivities(deps: ActivityDeps) {
  return { ...ticketTriageActivities(deps), ...supportRoutingActivities(deps) };
}

export function createActivities(deps: ActivityDeps) {
  return { ...builtInActivities(deps), ...railActivities(deps.store) };
}

export type HandrailActivities = ReturnType<typeof createActivities>;
