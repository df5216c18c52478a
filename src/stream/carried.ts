/**
 * The rail's records as its deliveries carry them (contracts/stages.ts `CarriedProgress`): each
 * stage delivery the rail schedules holds its status and its acks at that moment, in the
 * history's `ActivityTaskScheduled` event — a command of the workflow, which no stage's worker
 * writes. A follower that reads the history anyway (./history-watch.ts) takes them from there and
 * asks the job's worker no query while the job's hops go on; it asks only when the rail moved
 * without scheduling a delivery since (an escalation, a fan-out branch settling, a decision with
 * no hop after it), or when the job's worker is of a build that carries nothing.
 */
import type { LoadedDataConverter } from '@temporalio/common';
import { decodeFromPayloadsAtIndex } from '@temporalio/common/lib/internal-non-workflow';
import { temporal } from '@temporalio/proto';
import type { AckRecord, CarriedProgress } from '../../contracts';
import type { JobStatusView } from '../../workflows/definitions';

const { EventType } = temporal.api.enums.v1;

/** The records a follower reads: the status and the acks at one moment (the `progress` query's shape). */
export interface CarriedRecords {
  status: JobStatusView;
  acks: AckRecord[];
}

/** One run's carried records, read from its history in order. */
export class CarriedReader {
  private acks: AckRecord[] = [];
  private status: JobStatusView | undefined;
  /** A workflow task completed after the newest carrier: the rail may have moved past it. */
  private stale = true;
  /** No workflow task of the run has completed yet: the rail has recorded nothing to ask about. */
  unmoved = true;

  constructor(private readonly converter: LoadedDataConverter) {}

  /** The records as the newest delivery carried them; undefined when the rail moved since, or
   * nothing was carried yet. */
  get records(): CarriedRecords | undefined {
    return this.stale || !this.status ? undefined : { status: this.status, acks: this.acks };
  }

  /** Starts over (a new run of the job: its carriers count its acks from its own first). */
  reset(): void {
    this.acks = [];
    this.status = undefined;
    this.stale = true;
    this.unmoved = true;
  }

  /** Takes the next events of the run's history, in order. */
  async read(events: readonly temporal.api.history.v1.IHistoryEvent[]): Promise<void> {
    for (const event of events) {
      if (event.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED) {
        this.stale = true;
        this.unmoved = false;
      }
      const scheduled = event.activityTaskScheduledEventAttributes;
      if (event.eventType !== EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED || !scheduled) continue;
      const carried = await this.decode(scheduled.input?.payloads);
      if (!carried) continue;
      if (carried.acks_from > this.acks.length) {
        // Acks this reader never read (it cannot: it reads the run from its first event): ask.
        this.reset();
        continue;
      }
      this.acks = [...this.acks.slice(0, carried.acks_from), ...carried.acks];
      this.status = carried.status as unknown as JobStatusView;
      this.stale = false;
    }
  }

  private async decode(payloads: temporal.api.common.v1.IPayload[] | null | undefined) {
    if (!payloads?.length) return undefined;
    try {
      const input = await decodeFromPayloadsAtIndex<{ rail?: unknown }>(this.converter, 0, payloads);
      return isCarried(input?.rail) ? input.rail : undefined;
    } catch {
      // An input this reader cannot open (another codec's keys): the rail is asked instead.
      return undefined;
    }
  }
}

function isCarried(value: unknown): value is CarriedProgress {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Partial<CarriedProgress>;
  return (
    Number.isSafeInteger(v.acks_from) &&
    v.acks_from! >= 0 &&
    Array.isArray(v.acks) &&
    typeof v.status === 'object' &&
    v.status !== null &&
    typeof v.status.status === 'string'
  );
}
