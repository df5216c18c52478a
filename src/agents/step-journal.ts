/**
 * Where a model stage keeps the steps it completed within one delivery (model replies, tool
 * results), so a retried attempt of the same delivery replays them instead of paying for them,
 * or running their tools, again. Steps are recorded in the store under the delivery key as they
 * complete, not at the end: a worker killed between steps loses only the step it was in.
 */
import type { Store } from '../worker/store';

export interface StepJournal {
  /** What `step` recorded, or undefined when it has not completed yet. */
  find(step: string): string | undefined;
  /** Records `step` (the first record wins) and returns what is recorded. */
  record(step: string, content: string): Promise<string>;
}

/** The steps recorded in the store under `deliveryKey`, read once when the attempt starts. */
export async function storedSteps(
  store: Pick<Store, 'findStageSteps' | 'recordStageStep'>,
  deliveryKey: string,
): Promise<StepJournal> {
  const recorded = await store.findStageSteps(deliveryKey);
  return {
    find: (step) => recorded.get(step),
    async record(step, content) {
      const kept = await store.recordStageStep(deliveryKey, step, content);
      recorded.set(step, kept);
      return kept;
    },
  };
}

/** Steps kept for this attempt only (a direct call with no delivery to resume). */
export function attemptSteps(): StepJournal {
  const recorded = new Map<string, string>();
  return {
    find: (step) => recorded.get(step),
    async record(step, content) {
      if (!recorded.has(step)) recorded.set(step, content);
      return recorded.get(step)!;
    },
  };
}
