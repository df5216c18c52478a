/**
 * Per-call approval in a stage's tool loop: the card's grants say which calls wait for a human
 * (`approval`: 'always', a predicate over the arguments), and the rail's hook results carry the
 * human's word on one call each, bound to the call by its digest (contracts/tool-approval.ts). A
 * word is for the call it names: the same tool with other arguments, or another call id, waits
 * again.
 */
import { toolCallDigest, type ToolApprovalDecided, type ToolGrant } from '../../contracts';
import type { ApprovalGate } from './run-agent';

/** The gate of a loop whose checkpointed steps are kept under `resumeKey`; undefined when no
 * grant asks for approval and no word was given (the loop runs as it always did). */
export function approvalGate(
  grants: readonly ToolGrant[],
  words: readonly ToolApprovalDecided[],
  resumeKey: string,
): ApprovalGate | undefined {
  const asks = grants.filter((g) => g.approval !== undefined && g.approval !== 'never');
  if (asks.length === 0 && words.length === 0) return undefined;
  return {
    needed(name, input) {
      const approval = asks.find((g) => g.name === name)?.approval;
      if (approval === undefined || approval === 'never') return false;
      if (approval === 'always') return true;
      try {
        return approval(input) === true;
      } catch {
        // A predicate that cannot judge these arguments: a human does.
        return true;
      }
    },
    decided({ name, callId, input }) {
      const digest = toolCallDigest({ resume_key: resumeKey, call_id: callId, name, args: input });
      const word = words.find((w) => w.digest === digest);
      if (!word) return undefined;
      return word.verdict === 'approve'
        ? { approved: true, ...(word.args ? { args: word.args } : {}) }
        : { refused: `${name} was denied by ${word.actor}${word.note ? `: ${word.note}` : ''}` };
    },
  };
}
