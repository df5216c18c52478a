/**
 * The activities of the shipped worker: the built-in pipelines' stages, each named after its
 * card, plus the rail's own: `priorDelivery` (the duplicate lookup), `mergeBranches` (a
 * fan-out's merge) and `beginHandoffRecord` / `closeHandoffRecord` (an escalation's record).
 * Every stage records its result under the delivery key, so a retried or repeated delivery
 * returns the first result instead of working (or writing) again.
 */
import type { createActivities } from './built-in';
import type { ActivityDeps } from './deps';

export type { ActivityDeps };
export { railActivities } from './rail-activities';
export { builtInActivities, createActivities } from './built-in';

/** Every activity of the shipped worker: the built-in pipelines' stages and the rail's own. */
export type HandrailActivities = ReturnType<typeof createActivities>;
