/**
 * A job's stream as events, and the durable ones derived from what the rail recorded (its acks,
 * its status view, its result). Pure: the same records give the same keyed events in the same
 * order, whichever server derives them, so the journal (./journal.ts) numbers each key once and
 * every follower reads one order. Nothing here comes from a stage's own output: a stage cannot
 * make an ack, a hop or an ending appear.
 */
import type { AckRecord } from '../../contracts';
import { HUMAN } from '../../contracts/pipeline';
import type { Escalation } from '../../workflows/definitions';
import type { JobStatusShown } from '../operator/client';
import { hopEndKey, hopStartKey } from './journal';

/** The rail's ack of a hop, as a follower reads it: the rail's record as it is. */
export type StreamAck = AckRecord;

/** A durable event: derived from the rail's records, numbered once, read again from the first. */
export type DurableEvent =
  | { type: 'job_started'; job_id: string }
  | { type: 'hop_started'; stage: string; hop: number; reserved_usd: number }
  | { type: 'ack'; ack: StreamAck }
  | { type: 'decision'; ack: StreamAck }
  | { type: 'hop_finished'; stage: string; hop: number; settled_usd?: number }
  | { type: 'escalated'; escalation: Escalation }
  /** The job handed itself on to run `run` (continue-as-new): same job, same stream. */
  | { type: 'job_continued'; run: number }
  | { type: 'job_finished'; status: string; reason?: string };

/** A live event: model text as it is generated, kept for the stream's retention only. */
export interface TextDelta {
  type: 'text_delta';
  stage: string;
  hop: number;
  delta: string;
}

/** A live event: a model stage's tool call starting (its arguments only when the stage's card
 * grants the tool with `showArguments`) or ending. */
export interface ToolCallEvent {
  type: 'tool_call';
  stage: string;
  hop: number;
  call_id: string;
  name: string;
  phase: 'start' | 'end';
  args?: unknown;
  ok?: boolean;
}

/** What a follower receives: an event and its id in the job's stream (ids only grow). */
export type JobEvent = (DurableEvent | TextDelta | ToolCallEvent) & { id: number };

/** The job's public state, sent with the events as a snapshot (not numbered: it is read again). */
export interface JobPublicState {
  status: string;
  stage: string;
  hops: number;
  usd_remaining: number;
  revisions_remaining: number;
  reserved_usd: number;
  spent_usd: number;
  working: { stage: string; hop: number }[];
  /** While the job waits on a human: since when (the `escalated` event of that escalation has it too). */
  escalated_since?: string;
  /** Why the job ended, once it has. */
  reason?: string;
}

/** What the rail recorded of a job at one moment: its status view and its acks, oldest first. */
export interface RailRecords {
  jobId: string;
  status: JobStatusShown;
  acks: readonly AckRecord[];
}

export interface KeyedEvent {
  key: string;
  event: DurableEvent;
}

/** Statuses after which the job does nothing more. */
const ENDED = new Set(['completed', 'rejected', 'cancelled', 'terminated', 'timed_out', 'failed', 'canceled']);

export function jobEnded(status: JobStatusShown): boolean {
  return ENDED.has(status.status);
}

/**
 * The durable events these records hold, keyed, in the order a follower reads them: the start;
 * per hop its start, acks and finish; an open escalation; the ending. A hop still working has
 * started and has no settled ack yet (an admission ack, recorded before the work, is left until
 * the hop settles it and the rail replaces it).
 */
export function railEvents(records: RailRecords): KeyedEvent[] {
  const { status, acks } = records;
  const working = new Set(status.reservations.map((r) => `${r.hop}:${r.stage}`));
  const events: KeyedEvent[] = [{ key: 'job', event: { type: 'job_started', job_id: records.jobId } }];
  const started = new Set<string>();
  const seen = new Map<string, number>();
  const start = (stage: string, hop: number, reserved: number) => {
    if (started.has(hopStartKey(hop, stage))) return;
    started.add(hopStartKey(hop, stage));
    events.push({ key: hopStartKey(hop, stage), event: { type: 'hop_started', stage, hop, reserved_usd: reserved } });
  };
  for (const ack of acks) {
    // A hop a stage worked: its accepted ack, whoever sent it on (a human's decision or a fork
    // names an actor on the hop it resumes). A human's own decision is not one: its hop to the
    // human was.
    const worked = ack.ack === 'accepted' && !(ack.actor && ack.stage === HUMAN);
    if (worked) start(ack.stage, ack.hop, ack.reserved_usd ?? 0);
    // An admission ack (a fan-out branch's, recorded before its work) waits for the hop to settle it.
    if (worked && ack.settled_usd === undefined && working.has(`${ack.hop}:${ack.stage}`)) continue;
    const base = `ack:${ack.hop}:${ack.ack}`;
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    events.push({ key: `${base}:${n}`, event: { type: ack.actor ? 'decision' : 'ack', ack: streamAck(ack) } });
    if (worked)
      events.push({
        key: hopEndKey(ack.hop, ack.stage),
        event: {
          type: 'hop_finished',
          stage: ack.stage,
          hop: ack.hop,
          ...(ack.settled_usd !== undefined ? { settled_usd: ack.settled_usd } : {}),
        },
      });
  }
  for (const r of status.reservations) start(r.stage, r.hop, r.usd);
  // The rail counts its runs (a run carries the count on): each new run once, where it is first seen.
  for (let run = 2; run <= (status.runs ?? 1); run++)
    events.push({ key: `run:${run}`, event: { type: 'job_continued', run } });
  if (status.escalation)
    events.push({
      key: `escalation:${status.escalation.since}`,
      event: { type: 'escalated', escalation: status.escalation },
    });
  if (jobEnded(status))
    events.push({
      key: 'end',
      event: { type: 'job_finished', status: status.status, ...(status.reason ? { reason: status.reason } : {}) },
    });
  return events;
}

/** The job's public state in these records. */
export function publicState(status: JobStatusShown): JobPublicState {
  return {
    status: status.status,
    stage: status.stage,
    hops: status.hops,
    usd_remaining: status.usd_remaining,
    revisions_remaining: status.revisions_remaining,
    reserved_usd: status.reserved_usd,
    spent_usd: status.spent_usd,
    working: status.reservations.map(({ stage, hop }) => ({ stage, hop })),
    ...(status.escalation ? { escalated_since: status.escalation.since } : {}),
    ...(status.reason ? { reason: status.reason } : {}),
  };
}

function streamAck(ack: AckRecord): StreamAck {
  return { ...ack };
}
