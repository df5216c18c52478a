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
  /** Where the writers write: their systems' own database, held by the writer worker only.
   * Unset: the store's own tables (the dev default, one database). The general worker's deps
   * never have one, and it registers no writer either. */
  writes?: Store;
}

/** Where this worker's writers write: their own connection, else the store's tables. */
export const writesOf = (deps: ActivityDeps): Store => deps.writes ?? deps.store;

/** What a stage turn needs from the deps: where traces go, and whose model the stage runs. */
export const turnOptions = (deps: ActivityDeps) => ({
  ...(deps.workspace === undefined ? {} : { workspace: deps.workspace }),
  ...(deps.model ? { modelId: deps.model.model } : {}),
});
