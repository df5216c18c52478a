import type { ChatModel } from '../src/worker/model';
import type { Store } from '../src/worker/store';

/** What the worker hands every pipeline's activity factory. */
export interface ActivityDeps {
  store: Store;
  /** Backs model-driven stages when set; deterministic offline stages run otherwise. */
  model?: ChatModel;
}
