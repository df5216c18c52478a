/**
 * The package's accumulated summary, on the activity side: segments are appended,
 * never re-summarised, and once the summary would pass `LIMITS.summaryKept` the oldest move to the
 * store (content-addressed, like artifacts) behind one reference segment. The stored text starts
 * with the previous reference when there was one, so `readSummarySegments` follows the chain back
 * and returns every segment in order. The format is contracts/summary.ts.
 */
import { LIMITS, joinSummary, parseReference, referenceSegment, segmentCount, splitSummary } from '../contracts';
import { sha256Hex } from '../src/worker/store/content';
import type { Store } from '../src/worker/store';

/** References followed before a chain counts as not the rail's: each stands for at least one hop,
 * and a job may take `LIMITS.hops` (a stage folds at almost every hop once the summary is full). */
const MAX_REFERENCES = LIMITS.hops;
const UNSTORED = '0'.repeat(64);

/**
 * `existing` with `added` appended. Over `LIMITS.summaryKept`, the fewest oldest segments that make
 * it fit go to the store and one reference segment takes their place (the newest stay on the
 * package). The newest segment always stays, beside the reference, even when the two are longer
 * (a stage's segment may be 500 characters of text): whoever reads the package sees the last hop.
 */
export async function appendSegments(
  store: Store,
  existing: string | undefined,
  added: readonly string[],
): Promise<string | undefined> {
  const segments = [...splitSummary(existing), ...added];
  if (segments.length === 0) return existing;
  const joined = joinSummary(segments);
  if (joined.length <= LIMITS.summaryKept || segments.length === 1) return joined;
  // Every sha has 64 hex digits: the reference's length is known before anything is stored.
  const fits = (moved: number) =>
    joinSummary([referenceSegment(UNSTORED, segmentCount(segments.slice(0, moved))), ...segments.slice(moved)])
      .length <= LIMITS.summaryKept;
  let moved = 1;
  while (moved < segments.length - 1 && !fits(moved)) moved++;
  const behind = segments.slice(0, moved);
  const sha = await store.putContent(joinSummary(behind));
  return joinSummary([referenceSegment(sha, segmentCount(behind)), ...segments.slice(moved)]);
}

/** A stored summary the package references is missing, or not what its reference says. */
export class SummaryUnreadableError extends Error {
  override readonly name = 'SummaryUnreadableError';
}

/** Every segment a summary stands for, oldest first: references followed (and checked) back
 * through the store. A summary without references is its own segments. */
export async function readSummarySegments(store: Store, summary: string | undefined): Promise<string[]> {
  let segments = splitSummary(summary);
  const newer: string[][] = [];
  for (let followed = 0; ; followed++) {
    const ref = segments[0] === undefined ? undefined : parseReference(segments[0]);
    if (!ref) break;
    if (followed >= MAX_REFERENCES)
      throw new SummaryUnreadableError(`summary chain is longer than ${MAX_REFERENCES} references`);
    const text = await store.getContent(ref.sha);
    if (text === null) throw new SummaryUnreadableError(`${ref.uri} is not in the ${store.backend} store`);
    if (sha256Hex(text) !== ref.sha)
      throw new SummaryUnreadableError(`${ref.uri}: stored text does not match its address`);
    const behind = splitSummary(text);
    if (segmentCount(behind) !== ref.segments)
      throw new SummaryUnreadableError(
        `${ref.uri} stands for ${ref.segments} segments; the store holds ${segmentCount(behind)}`,
      );
    newer.unshift(segments.slice(1));
    segments = behind;
  }
  return [...segments, ...newer.flat()];
}
