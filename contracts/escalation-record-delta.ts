/** How a decided escalation record reaches the next stage. No zod: the rail
 * builds the delta in workflow code. */
import type { EscalationRecord } from './escalation-record';
import type { HumanDecision } from './job';

/** The event of the message a decided record re-injects into the job's log. */
export const ESCALATION_RECORD_DECIDED_EVENT = 'handoff.decided';

/**
 * A decided record's delta, as the one message the next stage gets:
 * the record's summary, open questions and next steps, who took it, and the decision with its
 * note. Plain text, so every handover strategy and model reads it the same way.
 */
export function escalationRecordDelta(
  record: Pick<EscalationRecord, 'id' | 'summary' | 'open_questions' | 'next_steps' | 'accepted_by'>,
  decision: Pick<HumanDecision, 'action' | 'actor' | 'note'>,
): string {
  const bullets = (title: string, items: readonly string[]) =>
    items.length ? [`${title}:`, ...items.map((i) => `- ${i}`)] : [];
  return [
    `Handoff record ${record.id}${record.accepted_by ? `, taken by ${record.accepted_by}` : ''}: decided ${decision.action} by ${decision.actor}.`,
    ...(decision.note ? [`Decision note: ${decision.note}`] : []),
    `Summary: ${record.summary}`,
    ...bullets('Open questions', record.open_questions),
    ...bullets('Next steps', record.next_steps),
  ].join('\n');
}

/** @deprecated Use ESCALATION_RECORD_DECIDED_EVENT. */
export const HANDOFF_DECIDED_EVENT = ESCALATION_RECORD_DECIDED_EVENT;
/** @deprecated Use escalationRecordDelta. */
export const handoffDelta = escalationRecordDelta;
