import type { ChatModel } from '../src/worker/model';
import type { Store } from '../src/worker/store';

/** What the worker hands every pipeline's activity factory. */
export interface ActivityDeps {
  store: Store;
  /** Backs model-driven stages when set; deterministic offline stages run otherwise. */
  model?: ChatModel;
  /** Root of the handover workspace (trace files of `transcript_materialize`); unset, a temp
   * directory per trace. */
  workspace?: string;
}

/** What a stage turn needs from the deps: where traces go, and whose model the stage runs. */
export const turnOptions = (deps: ActivityDeps) => ({
  ...(deps.workspace === undefined ? {} : { workspace: deps.workspace }),
  ...(deps.model ? { modelId: deps.model.model } : {}),
});
