/**
 * Human decisions on an escalated job: which are possible, and the `decide` update's validator.
 * The validator is synchronous (the SDK does not await it) and throws to refuse; a refused
 * decision never reaches history, and the Web UI shows the message.
 */
import {
  LIMITS,
  canonicalJson,
  newestArtifact,
  refusalLines,
  validators,
  type HumanDecision,
  type AckRecord,
  type HandoffV1,
  type Pipeline,
} from '../../contracts/rail';
import type { Escalation } from '../definitions';
import { CONTEXT_BUDGET_REASON } from './hop-decisions';

type Action = HumanDecision['action'];

/**
 * Decisions that make sense for this escalation. Reject always does; top-up unless the hop was
 * refused for its handover's token cap (money cannot shrink a transcript: approve retries the
 * hop, e.g. once the edge's cap was raised and the worker redeployed). Approve retries
 * what was blocked, which cannot fix a package that fails its schema, and cannot pass work the
 * critic failed (a writer runs only behind a passing verdict; the human revises or tops up
 * revisions instead). Revise needs a pipeline with a reviser that can take the package.
 */
export function decisionOptions(
  pkg: HandoffV1,
  lastAck: AckRecord | undefined,
  blocked: string | undefined,
  pipeline: Pick<Pipeline, 'get' | 'reviser'>,
): Action[] {
  const contextCap = lastAck?.ack === 'rejected_budget' && lastAck.reason.startsWith(`${CONTEXT_BUDGET_REASON}:`);
  const options: Action[] = contextCap ? ['reject'] : ['reject', 'top_up'];
  const unfixable = lastAck?.ack === 'rejected_schema';
  const judgedFail = blocked !== undefined && blocked === pipeline.reviser && pkg.evaluator?.last_verdict === 'fail';
  if (!unfixable && !judgedFail) options.unshift('approve');
  const newest = newestArtifact(pkg)?.type;
  const reviser = pipeline.reviser === undefined ? undefined : pipeline.get(pipeline.reviser);
  if (!unfixable && newest && reviser?.accepts.includes(newest)) options.push('revise');
  return options;
}

/**
 * A word on a tool call is for the call the escalation shows and no other: an escalation that
 * waits on a call is approved only with a word naming its digest (run or deny), and a word is
 * taken only on such an escalation.
 */
function checkToolCallWord(d: HumanDecision, escalation: Escalation): void {
  const call = escalation.tool_call;
  if (d.tool_call === undefined) {
    if (call && d.action === 'approve')
      throw new Error(
        `this escalation waits on a tool call: approve it with tool_call { digest: "${call.digest}", verdict: "approve" | "deny" }`,
      );
    return;
  }
  if (!call) throw new Error('tool_call is a word on a tool call: no tool call waits on this escalation');
  if (d.action !== 'approve') throw new Error('tool_call is given with approve (reject ends the job)');
  if (d.tool_call.digest !== call.digest)
    throw new Error(`tool_call.digest ${d.tool_call.digest} is not the call this escalation waits on (${call.digest})`);
  if (d.tool_call.args !== undefined) {
    if (d.tool_call.verdict !== 'approve') throw new Error('tool_call.args are given with verdict approve');
    if (!call.editable)
      throw new Error(`the grant of ${call.name} does not allow a human to edit its arguments (approvalEdits)`);
    if (canonicalJson(d.tool_call.args).length > LIMITS.shortText * 8)
      throw new Error(`tool_call.args are over ${LIMITS.shortText * 8} characters as JSON`);
  }
}

/** `openRecord`: the id of the escalation record of the escalation the job waits on, if it has one;
 * `blockedWrites`: whether the step the escalation blocked is a writer's (a word on a write in doubt
 * is taken for a writer only). */
export function validateDecision(
  decision: unknown,
  escalation: Escalation | undefined,
  alreadyDecided: boolean,
  openRecord?: string,
  blockedWrites = false,
): void {
  if (!escalation) throw new Error('the job is not waiting for a human decision');
  if (alreadyDecided) throw new Error('a decision for this escalation is already being applied');
  if (!validators.humanDecision(decision)) {
    throw new Error(`invalid decision: ${refusalLines(validators.humanDecision.errors, 'decision').join('; ')}`);
  }
  const d = decision;
  // A decision taken through a record decides only the escalation that record stands for: not
  // an older one's, and not one an API caller began for a job they were never handed.
  if (d.handoff_record !== undefined && d.handoff_record !== openRecord) {
    throw new Error(`handoff record ${d.handoff_record} is not the record of the escalation this job waits on`);
  }
  if (!escalation.options.includes(d.action)) {
    throw new Error(
      `"${d.action}" is not possible for this escalation; choose one of: ${escalation.options.join(', ')}`,
    );
  }
  if (d.in_doubt !== undefined && (d.action !== 'approve' || !blockedWrites)) {
    throw new Error('in_doubt is a word on a write in doubt: give it with approve, on an escalated writer');
  }
  checkToolCallWord(d, escalation);
  if (d.action === 'top_up' && !((d.usd ?? 0) > 0 || (d.revisions ?? 0) > 0)) {
    throw new Error('top_up needs usd > 0 or revisions > 0');
  }
}
