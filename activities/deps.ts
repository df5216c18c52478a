import type { ChatModel } from '../src/worker/model';
import type { CrmStore, Store } from '../src/worker/store';

/** What the worker hands every pipeline's activity factory. */
export interface ActivityDeps {
  store: Store;
  /** Backs model-driven stages when set; deterministic offline stages run otherwise. */
  model?: ChatModel;
  /** Root of the handover workspace (trace files of `transcript_materialize`); unset, a temp
   * directory per trace. */
  workspace?: string;
  /** The CRM the writers write. Unset: the store's own tables (the dev default, one database).
   * The general worker's deps never have one, and it registers no writer either. */
  crm?: CrmStore;
}

/** Where this worker's writers write: the CRM's own connection, else the store's tables. */
export const crmOf = (deps: ActivityDeps): CrmStore => deps.crm ?? deps.store;

/** What a stage turn needs from the deps: where traces go, and whose model the stage runs. */
export const turnOptions = (deps: ActivityDeps) => ({
  ...(deps.workspace === undefined ? {} : { workspace: deps.workspace }),
  ...(deps.model ? { modelId: deps.model.model } : {}),
});
