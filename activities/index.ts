/**
 * The rail's own activities, registered by every worker next to the pipelines' stages:
 * `priorDelivery` / `recordDelivery` (the rail's own record of deliveries,
 * which no stage's word replaces), `mergeBranches` (a fan-out's merge) and
 * `beginEscalationRecord` / `closeEscalationRecord` (an escalation's record). Every stage records its
 * result under the delivery key, so a retried or repeated delivery returns the first result
 * instead of working (or writing) again. The built-in pipelines' stages are in ./built-in.
 */
import type { railActivities } from './rail-activities';
import type { ActivityDeps } from './deps';

export type { ActivityDeps };
export { railActivities } from './rail-activities';

export type RailActivities = ReturnType<typeof railActivities>;
