/**
 * The rail's handoff record writes (seed 003, issue 15): an escalation begins a record, and the
 * job's end or its decision closes it (the decider taking it first). Every write carries the
 * rail's idempotency key, so a retried activity never doubles a record or a transition.
 */
import { ApplicationFailure } from '@temporalio/common';
import { HandoffTransitionError, type HandoffBeginInput, type HandoffCloseReason, type HandoffRecord, type HumanDecision } from '../contracts';
import type { Store } from '../src/worker/store';

export interface BeginRecordWork {
  key: string;
  record: HandoffBeginInput;
}

export interface CloseRecordWork {
  id: string;
  key: string;
  reason: HandoffCloseReason;
  /** The human decision that closes it: the decider takes the record first, if nobody has. */
  decision?: Pick<HumanDecision, 'action' | 'actor' | 'note'>;
}

export interface ClosedRecord {
  record: HandoffRecord;
}

export function handoffRecordActivities(store: Store) {
  return {
    async beginHandoffRecord(work: BeginRecordWork): Promise<HandoffRecord> {
      return store.beginHandoff(work.record, work.key).catch(refusal);
    },

    async closeHandoffRecord(work: CloseRecordWork): Promise<ClosedRecord> {
      if (work.decision) await store.acceptHandoff(work.id, work.decision.actor, `${work.key}:accept`).catch(takenOrFinal);
      try {
        return { record: await store.closeHandoff(work.id, work.reason, work.key) };
      } catch (error) {
        // Cancelled through the API (or closed by an earlier attempt under another key): final
        // already, nothing to close.
        if (!(error instanceof HandoffTransitionError && error.code === 'illegal_transition')) return refusal(error);
        return { record: (await store.getHandoff(work.id))! };
      }
    },
  };
}

/** Someone else took the record, or it is final: the decision stands, the record says who took it. */
function takenOrFinal(error: unknown): void {
  if (error instanceof HandoffTransitionError && (error.code === 'conflict' || error.code === 'illegal_transition')) return;
  refusal(error);
}

/** A refused write is the record's state speaking, not an outage: retrying cannot change it. */
function refusal(error: unknown): never {
  if (error instanceof HandoffTransitionError) throw ApplicationFailure.nonRetryable(error.message, `HandoffRecord_${error.code}`);
  throw error;
}
