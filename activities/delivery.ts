/**
 * What every stage activity shares: check the delivery, do the work at most once per delivery
 * key, and build the emitted package without touching what the rail owns.
 */
import { handoffV1, issueLines, type Artifact, type Evaluator, type HandoffV1, type ToolTried } from '../contracts';
import type { StageCard, StageResult, StageWork } from '../contracts/stages';
import type { Store } from '../src/store';
import { stageFailure } from './failures';
import { whileHeartbeating } from './heartbeat';

export interface StageOutput {
  artifact: Artifact;
  body: unknown;
  cost_usd: number;
  tools_tried?: ToolTried[];
  open_questions?: string[];
  memory_refs?: string[];
  /** Only the judge sets this. */
  evaluator?: Evaluator;
}

/**
 * Runs `work` for a delivery unless a result is already recorded under its key; records the
 * result (first one wins) and returns the recorded one. A retry after a crash between the work
 * and the report therefore returns what the first attempt recorded, or redoes idempotent work.
 * It heartbeats throughout, so such a crash is noticed within the card's heartbeat timeout.
 */
export async function deliverOnce(
  store: Store,
  card: StageCard,
  delivery: StageWork,
  work: (pkg: HandoffV1) => Promise<StageOutput>,
): Promise<StageResult> {
  const pkg = checkDelivery(card, delivery);
  return whileHeartbeating(async () => {
    const prior = await store.findStageCompletion(delivery.delivery_key);
    if (prior) return prior;
    const output = await work(pkg);
    return store.recordStageCompletion(delivery.delivery_key, {
      package: emit(pkg, output),
      artifact: output.artifact,
      cost_usd: output.cost_usd,
      body: output.body,
    });
  });
}

/** The second line behind the rail's ack: a stage never works on a delivery meant for another
 * stage, a malformed package, or a package whose newest artifact it does not take. */
function checkDelivery(card: StageCard, delivery: StageWork): HandoffV1 {
  if (delivery.stage !== card.name) {
    throw stageFailure('StageInputInvalid', `delivery for stage "${String(delivery.stage)}" reached "${card.name}"`);
  }
  if (typeof delivery.delivery_key !== 'string' || delivery.delivery_key.length === 0 || delivery.delivery_key.length > 500) {
    throw stageFailure('StageInputInvalid', `${card.name}: delivery_key must be a non-empty string of at most 500 characters`);
  }
  const parsed = handoffV1.safeParse(delivery.package);
  if (!parsed.success) {
    const issues = issueLines(parsed.error, '/', 5);
    throw stageFailure('StageInputInvalid', `${card.name}: package is not a valid handoff.v1 (${issues.join('; ')})`, { issues });
  }
  const newest = parsed.data.artifacts[parsed.data.artifacts.length - 1];
  if (!newest || !card.accepts.includes(newest.type)) {
    throw stageFailure('StageInputInvalid', `${card.name} takes ${card.accepts.join(' | ')}; the newest artifact is ${newest?.type ?? 'missing'}`);
  }
  // The rail compares what we emit with what it delivered, so pass on the caller's object, not
  // zod's copy (which would be equal, but this keeps unknown fields byte-for-byte).
  return delivery.package;
}

export function appendUnique<T>(list: readonly T[], extra: readonly T[] | undefined): T[] {
  return [...list, ...(extra ?? []).filter((item) => !list.includes(item))];
}

/** Input package + output artifact (+ questions, tools, memory refs, judge's evaluator). */
function emit(pkg: HandoffV1, output: StageOutput): HandoffV1 {
  return {
    ...pkg,
    artifacts: [...pkg.artifacts, output.artifact],
    open_questions: appendUnique(pkg.open_questions, output.open_questions),
    tools_tried: [...pkg.tools_tried, ...(output.tools_tried ?? [])],
    memory_refs: appendUnique(pkg.memory_refs, output.memory_refs),
    evaluator: output.evaluator ?? pkg.evaluator,
  };
}
