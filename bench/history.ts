/**
 * Reading what a workflow's history says it cost: events, and which activities it scheduled.
 */
import type { Client } from '@temporalio/client';
import type { History } from '@temporalio/common/lib/proto-utils';
import { temporal } from '@temporalio/proto';
import { BUILT_IN_PIPELINES } from '../contracts/pipelines';

export type { History };

export async function fetchHistories(client: Client, workflowIds: readonly string[]): Promise<History[]> {
  return Promise.all(workflowIds.map((id) => client.workflow.getHandle(id).fetchHistory()));
}

/** Activity types the workflow scheduled (local activities show up as markers, not here). */
export function activitiesScheduled(history: History): string[] {
  return (history.events ?? [])
    .map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name)
    .filter((n): n is string => Boolean(n));
}

/** Local activities the workflow ran (each is a marker; patch markers are not counted). */
export function localActivitiesRecorded(history: History): number {
  return (history.events ?? []).filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_local_activity')
    .length;
}

const STAGE_NAMES = new Set(BUILT_IN_PIPELINES.flatMap((p) => p.cards.map((card) => card.name)));

/** Stage work the workflow scheduled: the rail's own lookups (e.g. `priorDelivery`) are not stage work. */
export function stageActivitiesScheduled(history: History): string[] {
  return activitiesScheduled(history).filter((name) => STAGE_NAMES.has(name));
}

/** Events per type, e.g. `{ EVENT_TYPE_ACTIVITY_TASK_SCHEDULED: 5 }`, summed over histories. */
export function eventTypeCounts(histories: readonly History[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const h of histories) {
    for (const e of h.events ?? []) {
      const type = eventTypeName(e);
      counts[type] = (counts[type] ?? 0) + 1;
    }
  }
  return counts;
}

export function meanEvents(histories: readonly History[]): number {
  return histories.reduce((sum, h) => sum + (h.events?.length ?? 0), 0) / Math.max(1, histories.length);
}

/** Stage activities scheduled per history, on average: a job's hops to a stage. */
export function meanStageHops(histories: readonly History[]): number {
  return histories.reduce((sum, h) => sum + stageActivitiesScheduled(h).length, 0) / Math.max(1, histories.length);
}

type HistoryEvent = NonNullable<History['events']>[number];

/** `ActivityTaskScheduled` from the one `…EventAttributes` field an event carries (the decoded
 * `eventType` is a bare enum number). */
function eventTypeName(event: HistoryEvent): string {
  const field = Object.keys(event).find(
    (k) => k.endsWith('EventAttributes') && (event as Record<string, unknown>)[k] != null,
  );
  return field
    ? field[0]!.toUpperCase() + field.slice(1, -'EventAttributes'.length)
    : `Unknown${String(event.eventType)}`;
}

/** The history as the server stores it (protobuf): its size, and its bytes as text, where every
 * JSON payload it carries is readable (to show what a history does or does not hold). */
export function encodedHistory(history: History): { bytes: number; text: string } {
  const encoded = temporal.api.history.v1.History.encode(history).finish();
  return { bytes: encoded.length, text: Buffer.from(encoded).toString('utf8') };
}

/** Both activities were scheduled before either completed (event ids of the job's history). */
export function branchesOverlapped(history: History, a: string, b: string): boolean {
  const scheduled = new Map<string, number>();
  const completedAt = new Map<number, number>();
  for (const e of history.events ?? []) {
    const name = e.activityTaskScheduledEventAttributes?.activityType?.name;
    if (name && !scheduled.has(name)) scheduled.set(name, Number(e.eventId));
    const done = e.activityTaskCompletedEventAttributes?.scheduledEventId;
    if (done) completedAt.set(Number(done), Number(e.eventId));
  }
  const [sa, sb] = [scheduled.get(a), scheduled.get(b)];
  if (sa === undefined || sb === undefined) return false;
  const [ca, cb] = [completedAt.get(sa), completedAt.get(sb)];
  return ca !== undefined && cb !== undefined && Math.max(sa, sb) < Math.min(ca, cb);
}
