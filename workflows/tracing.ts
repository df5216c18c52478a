/**
 * Hops as OpenTelemetry spans. Workflow code cannot export spans itself, so it
 * hands each finished hop to the worker through a sink; the worker turns it into a `hop` span
 * under the package's traceparent with one child span per ack (src/worker/tracing.ts). Sink calls are
 * not part of the history: tracing adds no event and replays unchanged.
 */
import { proxySinks, type Sinks } from '@temporalio/workflow';
import type { AckRecord } from '../contracts/rail';

export interface HopTrace {
  job_id: string;
  /** The stage the hop was addressed to (`human` for an escalation). */
  stage: string;
  /** The stage that did the work, when a fallback answered instead. */
  ran?: string;
  from: string;
  reason: string;
  /** The span's parent: the traceparent the package carried (every ack repeats it). */
  traceparent: string;
  /** Workflow time, epoch milliseconds. */
  started_at: number;
  ended_at: number;
  acks: AckRecord[];
  cost_usd: number;
  /** Why the stage work failed after an `accepted` ack, when it did. */
  failure?: string;
}

export interface RailSinks extends Sinks {
  trace: { hop(hop: HopTrace): void };
}

const { trace } = proxySinks<RailSinks>();

export function traceHop(hop: HopTrace): void {
  trace.hop(hop);
}
