/**
 * The shipped help-center corpus, loaded into a store the first time a retrieval there needs it:
 * a worker whose pipelines never search it never loads it. Idempotent (unchanged chunks are left
 * alone), so every process may load it once per store.
 */
import { loadHelpCenter, type Store } from '../../src';

const loads = new WeakMap<Store, Promise<unknown>>();

export function helpCenterLoaded(store: Store): Promise<unknown> {
  let load = loads.get(store);
  if (!load) {
    load = loadHelpCenter(store);
    loads.set(store, load);
    // A failed load is tried again by the next retrieval (the activity's retry).
    load.catch(() => loads.delete(store));
  }
  return load;
}
