/**
 * The escalation record an escalation leaves: what the human taking the job
 * reads before deciding. Pure: the rail builds it from the package and the escalation, an
 * activity writes it.
 */
import { LIMITS, clip, neutraliseBidi, type EscalationRecordBeginInput, type HandoffV1 } from '../../contracts/rail';
import type { Escalation } from '../definitions';

/** Who begins the records of escalations: the rail, never a human. */
export const RAIL_ACTOR = 'rail';

/** Package text may hold what record text may not (an unpaired surrogate, a bidi override, a
 * blank item): a stage wrote it, so it is made readable rather than refused, which would cost
 * the escalation its record. */
const wellFormed = (s: string) => neutraliseBidi(s.replace(/[\uD800-\uDFFF]/gu, '\uFFFD'));
const item = (s: string) => clip(wellFormed(s).trim(), LIMITS.shortText);

/**
 * The record of one escalation: the package's summary (its goal when it has none), its open
 * questions, and as next steps the escalation's reasons and the decisions `decide` accepts.
 * Workspace is the job's namespace, project its pipeline; the owner is the job request's.
 */
export function escalationRecord(
  pkg: Pick<HandoffV1, 'job_id' | 'goal' | 'summary' | 'open_questions'>,
  escalation: Pick<Escalation, 'reasons' | 'blocked' | 'options' | 'tool_call'>,
  where: { workspace: string; project: string; owner?: string | undefined },
): EscalationRecordBeginInput {
  const summary = wellFormed(pkg.summary ?? '').trim()
    ? wellFormed(pkg.summary!)
    : clip(wellFormed(pkg.goal), LIMITS.summary);
  const steps = [
    ...escalation.reasons.map((reason) => item(`resolve: ${reason}`)),
    item(`decide ${escalation.options.join(' | ')} (the job is blocked at ${escalation.blocked})`),
    ...(escalation.tool_call ? [toolCallStep(escalation.tool_call)] : []),
  ];
  return {
    workspace: where.workspace,
    project: where.project,
    job_id: pkg.job_id,
    summary,
    open_questions: pkg.open_questions
      .map(item)
      .filter((q) => q.length > 0)
      .slice(0, LIMITS.listItems),
    next_steps: steps.slice(0, LIMITS.listItems),
    ...(where.owner !== undefined ? { owner: where.owner } : {}),
    created_by: RAIL_ACTOR,
  };
}

/** The tool call a human is asked about, and how to answer it (the model's words: made readable). */
function toolCallStep(call: NonNullable<Escalation['tool_call']>): string {
  const args = JSON.stringify(call.args ?? null);
  return item(`approve or deny the call ${call.name} ${args.slice(0, 200)} with tool_call.digest ${call.digest}`);
}

/** The idempotency keys of a run's n-th escalation record (n from 1): a retried activity writes
 * once. Counted per run, not per hop (a job can escalate twice at one hop), and marked with the
 * run's random tail, so a reset or a job id used again after retention gets records of its own. */
export function escalationKeys(jobId: string, runId: string, n: number) {
  const begin = `${jobId}:escalation:${runId.replace(/-/g, '').slice(-16)}:${n}`;
  return { begin, close: `${begin}:close` };
}
