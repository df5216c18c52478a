/**
 * The rail's escalation record writes: an escalation begins a record, and the
 * job's end or its decision closes it (the decider taking it first). Every write carries the
 * rail's idempotency key, so a retried activity never doubles a record or a transition.
 */
import { ApplicationFailure } from '@temporalio/common';
import {
  EscalationRecordTransitionError,
  type EscalationRecordBeginInput,
  type EscalationRecordCloseReason,
  type EscalationRecord,
  type HumanDecision,
} from '../contracts';
import type { Store } from '../src/worker/store';

export interface BeginRecordWork {
  key: string;
  record: EscalationRecordBeginInput;
}

export interface CloseRecordWork {
  id: string;
  key: string;
  reason: EscalationRecordCloseReason;
  /** The human decision that closes it. Taken through this record (`handoff_record` is its id),
   * the close applies only while the record is open to the decider, and is refused otherwise (a
   * cancel or another's accept came first): the job then refuses the decision. Taken elsewhere
   * (the CLI, the Web UI), the decider takes the record if it is still open to them, and the
   * record is closed whatever came first. */
  decision?: Pick<HumanDecision, 'action' | 'actor' | 'note' | 'handoff_record'>;
}

export interface ClosedRecord {
  record: EscalationRecord;
}

export function escalationRecordActivities(store: Store) {
  return {
    async beginEscalationRecord(work: BeginRecordWork): Promise<EscalationRecord> {
      return store.beginEscalationRecord(work.record, work.key).catch(refusal);
    },

    async closeEscalationRecord(work: CloseRecordWork): Promise<ClosedRecord> {
      const decision = work.decision;
      if (!decision) return closeAsRail(store, work);
      const decider = { actor: decision.actor, action: decision.action };
      if (decision.handoff_record === work.id)
        return { record: await store.closeEscalationRecord(work.id, work.reason, work.key, decider).catch(refusal) };
      try {
        return { record: await store.closeEscalationRecord(work.id, work.reason, work.key, decider) };
      } catch (error) {
        // Someone else took it: the decision stands (the ack names the decider), the record stays theirs.
        if (error instanceof EscalationRecordTransitionError && error.code === 'conflict')
          return closeAsRail(store, work);
        return closedAlready(store, work, error);
      }
    },
  };
}

/** The rail's close, whatever state the record is in. */
async function closeAsRail(store: Store, work: CloseRecordWork): Promise<ClosedRecord> {
  try {
    return { record: await store.closeEscalationRecord(work.id, work.reason, work.key) };
  } catch (error) {
    return closedAlready(store, work, error);
  }
}

/** Cancelled through the API (or closed by an earlier attempt under another key): final
 * already, nothing to close. */
async function closedAlready(store: Store, work: CloseRecordWork, error: unknown): Promise<ClosedRecord> {
  if (!(error instanceof EscalationRecordTransitionError && error.code === 'illegal_transition')) return refusal(error);
  return { record: (await store.getEscalationRecord(work.id))! };
}

/** A refused write is the record's state speaking, not an outage: retrying cannot change it. */
function refusal(error: unknown): never {
  if (error instanceof EscalationRecordTransitionError)
    throw ApplicationFailure.nonRetryable(error.message, `EscalationRecord_${error.code}`);
  throw error;
}
