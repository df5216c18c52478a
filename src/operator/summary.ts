/**
 * A job's accumulated summary as an operator reads it (`handrail show`): every segment, oldest
 * first, with the segments moved to the store read back through their references.
 */
import { parseReference, splitSummary } from '../../contracts';
import { readSummarySegments } from '../../activities/summary';
import type { Store } from '../worker/store';

export interface JobSummary {
  /** Every segment, oldest first; when `unreadable`, the package's own (a reference first). */
  segments: string[];
  /** Why the segments behind the package's reference could not be read. */
  unreadable?: string;
}

/**
 * The summary's segments. The store is opened only when the summary references segments moved
 * there; a store that cannot be opened or read leaves the package's segments and says why (the
 * rest of `show` does not depend on the store).
 */
export async function jobSummary(summary: string | undefined, openStore: () => Promise<Store>): Promise<JobSummary> {
  const own = splitSummary(summary);
  if (own[0] === undefined || !parseReference(own[0])) return { segments: own };
  let store: Store | undefined;
  try {
    store = await openStore();
    return { segments: await readSummarySegments(store, summary) };
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    return {
      segments: own,
      unreadable: `${why} (the CLI must read the worker's store: the same HANDRAIL_DATA_DIR or DATABASE_URL)`,
    };
  } finally {
    await store?.close();
  }
}
