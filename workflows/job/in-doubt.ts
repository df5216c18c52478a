/**
 * Where a writer's write in doubt stands, on the acks an operator reads (the `acks` and `status`
 * queries, the job's result, the Web UI's details and its `HandrailAcks`): the writer's hop that
 * failed WriteInDoubt says `escalated`, the human's hop says their word, and the retried writer's
 * hop says how it was settled, with the system's reference.
 */
import { writeKey, type AckInDoubt, type AckRecord, type HumanDecision, type Pipeline } from '../../contracts/rail';
import type { HopOutcome } from '../run-hop';

/** The hop's acks, the writer's own (its first, when accepted) saying where its write in doubt stands. */
export function withInDoubt(outcome: HopOutcome, pipeline: Pipeline, jobId: string): AckRecord[] {
  const [first, ...rest] = outcome.acks;
  if (first?.ack !== 'accepted') return outcome.acks;
  const inDoubt = writerInDoubt(outcome, pipeline, jobId);
  return inDoubt ? [{ ...first, in_doubt: inDoubt }, ...rest] : outcome.acks;
}

function writerInDoubt(outcome: HopOutcome, pipeline: Pipeline, jobId: string): AckInDoubt | undefined {
  const receipt = outcome.ok ? outcome.result?.receipt : undefined;
  if (receipt?.in_doubt) {
    const { resolution, sends } = receipt.in_doubt;
    return { resolution, write_key: receipt.write_key, reference: receipt.reference, sends };
  }
  // Checked first: the card is looked up only for the rare hop whose write is in doubt.
  if (outcome.failureType !== 'WriteInDoubt') return undefined;
  const card = pipeline.get(outcome.stage);
  return card && card.writes !== null ? { resolution: 'escalated', write_key: writeKey(jobId, card) } : undefined;
}

/** The human's word on a write in doubt, for their hop's ack. */
export function decidedInDoubt(decision: HumanDecision): AckInDoubt | undefined {
  const word = decision.in_doubt;
  if (!word) return undefined;
  return 'happened' in word ? { resolution: 'human_happened', reference: word.happened } : { resolution: 'human_send' };
}
