/**
 * A tool call that waits for a human, named by a digest over where the loop stopped (the delivery
 * key whose checkpointed steps hold the call), the call's id there, the tool and its arguments in
 * canonical JSON. The worker computes it when its loop stops; the rail computes it again from the
 * call it shows the human, so an approval holds for the call the human saw and no other. Pure:
 * the workflow sandbox imports it.
 */
import { canonicalJson } from './canonical-json';
import { masksPersonalData, redactPersonalDataFor } from './constraints';
import { sha256Hex } from './sha256';
import { TOOL_APPROVAL_DECIDED, type HookResult, type ToolApprovalDecided, type ToolCallAwaiting } from './stages';

export function toolCallDigest(call: Pick<ToolCallAwaiting, 'resume_key' | 'call_id' | 'name' | 'args'>): string {
  const named = { resume_key: call.resume_key, call_id: call.call_id, tool: call.name, args: call.args ?? null };
  return `sha256:${sha256Hex(canonicalJson(named))}`;
}

/** A call's arguments as a human is shown them under the job's constraints: every string in them
 * masked where the job masks personal data (the digest is over the arguments as the model gave
 * them, so the word still names the call that runs). */
export function shownArgs(constraints: readonly string[], args: unknown): unknown {
  if (!masksPersonalData(constraints)) return args;
  const mask = (value: unknown): unknown => {
    if (typeof value === 'string') return redactPersonalDataFor(constraints, value);
    if (Array.isArray(value)) return value.map(mask);
    if (value && typeof value === 'object')
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, mask(v)]));
    return value;
  };
  return mask(args);
}

/** The humans' words on tool calls among a delivery's hook results (the rail hands them over), for
 * this job's stage only: a word names the delivery whose steps hold its call, which must be this
 * job's and this stage's (a word handed to every branch of a fan-out belongs to one of them). */
export function approvalWords(
  hooks: readonly HookResult[] | undefined,
  jobId: string,
  stage: string,
): ToolApprovalDecided[] {
  const words: ToolApprovalDecided[] = [];
  for (const hook of hooks ?? []) {
    if (hook.event !== TOOL_APPROVAL_DECIDED) continue;
    const word = JSON.parse(hook.text) as Partial<ToolApprovalDecided>;
    if (
      typeof word.digest === 'string' &&
      typeof word.resume_key === 'string' &&
      word.resume_key.startsWith(`${jobId}:${stage}:`) &&
      word.verdict &&
      word.actor
    )
      words.push(word as ToolApprovalDecided);
  }
  return words;
}
