/**
 * The activities registered on the worker: one per stage, named after it, plus `priorDelivery`
 * (the rail's duplicate lookup). Every stage records its result under the delivery key, so a
 * retried or repeated delivery returns the first result instead of working (or writing) again.
 */
import type { StageResult, StageWork } from '../contracts/stages';
import { draftStage, intakeStage, judgeStage, retrieveStage, writebackStage } from '../contracts/stages';
import type { ChatModel } from '../src/model';
import type { Store } from '../src/store';
import { deliverOnce } from './delivery';
import { runDraft } from './draft';
import { runIntake } from './intake';
import { runJudge } from './judge';
import { runRetrieve } from './retrieve';
import { runWriteback } from './writeback';

export interface ActivityDeps {
  store: Store;
  /** Backs draft and judge when set; the deterministic offline stages run otherwise. */
  model?: ChatModel;
}

export function createActivities({ store, model }: ActivityDeps) {
  return {
    intake: (work: StageWork): Promise<StageResult> => deliverOnce(store, intakeStage, work, (pkg) => runIntake(store, pkg)),
    retrieve: (work: StageWork): Promise<StageResult> => deliverOnce(store, retrieveStage, work, (pkg) => runRetrieve(store, pkg)),
    draft: (work: StageWork): Promise<StageResult> => deliverOnce(store, draftStage, work, (pkg) => runDraft(store, model, pkg)),
    judge: (work: StageWork): Promise<StageResult> => deliverOnce(store, judgeStage, work, (pkg) => runJudge(store, model, pkg)),
    writeback: (work: StageWork): Promise<StageResult> => deliverOnce(store, writebackStage, work, (pkg) => runWriteback(store, pkg)),
    /** The result recorded for a delivery, or null: a repeated delivery acks `duplicate`. */
    priorDelivery: ({ delivery_key }: { delivery_key: string }): Promise<StageResult | null> => store.findStageCompletion(delivery_key),
  };
}

export type HandrailActivities = ReturnType<typeof createActivities>;
