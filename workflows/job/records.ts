/**
 * An escalation's record: begun when the job escalates, for a human to find and take,
 * and closed by the decision (the decider taking it first), the job's end, or a decision taken
 * through the record itself. Every write is keyed; a store that stays down costs only the record
 * (logged), never the escalation.
 */
import { ActivityFailure, ApplicationFailure, CancellationScope, log, workflowInfo } from '@temporalio/workflow';
import {
  ESCALATION_RECORD_DECIDED_EVENT,
  escalationRecordDelta,
  type EscalationRecordCloseReason,
  type EscalationRecord,
  type HookResult,
  type HumanDecision,
} from '../../contracts/rail';
import { beginEscalationRecord, closeEscalationRecord } from '../activities';
import { escalationKeys, escalationRecord } from '../rail/escalation-record';
import type { JobState } from './state';

type Decided = Pick<HumanDecision, 'action' | 'actor' | 'note' | 'handoff_record'>;

export class EscalationRecords {
  /** The open record, with the key that closes it. */
  private open?: { id: string; closeKey: string };

  /** `begun`: how many records this run began before (their keys are taken). */
  constructor(private begun = 0) {}

  get openId(): string | undefined {
    return this.open?.id;
  }

  get count(): number {
    return this.begun;
  }

  /** Begins the record of the job's open escalation. Not cancellable: a record the store took is
   * one the job must close. */
  async begin(job: JobState): Promise<void> {
    const keys = escalationKeys(job.jobId, workflowInfo().runId, ++this.begun);
    const record = escalationRecord(job.package, job.escalation!, {
      workspace: workflowInfo().namespace,
      project: job.pipeline.name,
      owner: job.settings.owner,
    });
    try {
      const begun = await CancellationScope.nonCancellable(() => beginEscalationRecord({ key: keys.begin, record }));
      this.open = { id: begun.id, closeKey: keys.close };
    } catch (err) {
      log.warn('the escalation has no handoff record', { job_id: job.jobId, error: String(err) });
    }
  }

  /** Closes the open record, if any; a decider takes it first. A decision's record comes back as
   * its delta, which the next stage gets beside the package: not in the package, whose
   * provenance the stages behind a verdict check. */
  async close(reason: EscalationRecordCloseReason, decision?: HumanDecision): Promise<HookResult[] | undefined> {
    const open = this.open;
    if (!open) return undefined;
    this.open = undefined;
    const decided = decision && decidedBy(decision);
    try {
      const { record } = await CancellationScope.nonCancellable(() =>
        closeEscalationRecord({ id: open.id, key: open.closeKey, reason, ...(decided ? { decision: decided } : {}) }),
      );
      return decided && decisionHooks(record, decided);
    } catch (err) {
      log.warn('the handoff record could not be closed', {
        job_id: workflowInfo().workflowId,
        record: open.id,
        error: String(err),
      });
      return undefined;
    }
  }

  /** Closes the open record on a decision taken through it; the decision counts only if that
   * close is written. A cancel or another's accept that reached the store first refuses it
   * (thrown as `HandoffRecordRefused`), and the record stays the job's to close. */
  async closeOnDecision(decision: HumanDecision): Promise<HookResult[] | undefined> {
    const open = this.open!;
    const decided = { ...decidedBy(decision), handoff_record: open.id };
    let closed: EscalationRecord;
    try {
      ({ record: closed } = await CancellationScope.nonCancellable(() =>
        closeEscalationRecord({ id: open.id, key: open.closeKey, reason: 'decided', decision: decided }),
      ));
    } catch (err) {
      throw ApplicationFailure.nonRetryable(
        `the decision was not taken: ${err instanceof ActivityFailure ? (err.cause?.message ?? err.message) : String(err)}`,
        'HandoffRecordRefused',
      );
    }
    // The job's own close (cancelled, timed out) under the same key may have come first.
    if (closed.close_reason !== 'decided' || closed.accepted_by !== decision.actor) {
      throw ApplicationFailure.nonRetryable(
        `the decision was not taken: handoff record ${open.id} was closed as ${closed.close_reason ?? closed.state}`,
        'HandoffRecordRefused',
      );
    }
    this.open = undefined;
    return decisionHooks(closed, decided);
  }
}

function decidedBy(decision: HumanDecision): Decided {
  return {
    action: decision.action,
    actor: decision.actor,
    ...(decision.note !== undefined ? { note: decision.note } : {}),
  };
}

/** What a decision's record hands the next hop: its delta, unless the record was given up
 * through the API (cancelled), which hands nothing on. */
export function decisionHooks(record: EscalationRecord, decided: Decided): HookResult[] | undefined {
  return record.state === 'cancelled'
    ? undefined
    : [{ event: ESCALATION_RECORD_DECIDED_EVENT, text: escalationRecordDelta(record, decided) }];
}
