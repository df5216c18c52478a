/**
 * The accumulated summary: each stage contributes its own segment, the segments are
 * joined with `\n---hop---\n` and never re-summarised. Once the summary would pass
 * `LIMITS.summaryKept` (a stage's worker keeps it there; `LIMITS.summary` caps any package), the
 * oldest segments move to the store behind one reference segment,
 * `[earlier hops: handrail://summaries/<sha256> (N segments)]`. The stored text is those segments
 * joined the same way, and its first segment is the previous reference when there was one, so
 * every segment stays reachable through a chain of references. Nothing is cut.
 *
 * Pure (workflow code checks the format: `summary_append_only`); activities write and read the
 * store (activities/summary.ts).
 */
import { clip } from './errors';
import { LIMITS } from './limits';

/** Between two segments. */
export const SUMMARY_SEPARATOR = '\n---hop---\n';

const SUMMARY_SCHEME = 'handrail://summaries/';
/** Where offloaded segments are stored: content-addressed, like artifacts. */
export const summaryUri = (sha: string) => `${SUMMARY_SCHEME}${sha}`;
export const isSummaryUri = (ref: string) => ref.startsWith(SUMMARY_SCHEME);

export interface SummaryReference {
  uri: string;
  sha: string;
  /** How many hop segments the reference stands for, those behind earlier references included. */
  segments: number;
}

const REFERENCE = /^\[earlier hops: handrail:\/\/summaries\/([0-9a-f]{64}) \((\d{1,6}) segments?\)\]$/;

/** The segment that stands for `segments` segments stored under `sha`. */
export const referenceSegment = (sha: string, segments: number): string =>
  `[earlier hops: ${summaryUri(sha)} (${segments} segment${segments === 1 ? '' : 's'})]`;

/** The reference a segment is, or undefined for any other segment. */
export function parseReference(segment: string): SummaryReference | undefined {
  const m = REFERENCE.exec(segment);
  return m ? { uri: summaryUri(m[1]!), sha: m[1]!, segments: Number(m[2]) } : undefined;
}

/** A summary's segments, oldest first (none for an absent or empty summary). A summary from
 * before segments (one line per hop) is one segment. */
export function splitSummary(summary: string | undefined): string[] {
  return summary ? summary.split(SUMMARY_SEPARATOR) : [];
}

export function joinSummary(segments: readonly string[]): string {
  return segments.join(SUMMARY_SEPARATOR);
}

/** How many hop segments these segments stand for: a reference counts what it stands for. */
export function segmentCount(segments: readonly string[]): number {
  return segments.reduce((n, s) => n + (parseReference(s)?.segments ?? 1), 0);
}

/** The newest segment of a summary: the one its last stage contributed. */
export function lastSegment(summary: string | undefined): string | undefined {
  return splitSummary(summary).at(-1);
}

/** What a stage says it did when it says nothing. */
export const DEFAULT_SEGMENT_TEXT = 'no summary given';

/**
 * The segment a stage contributes: `hop <count> <stage> → <artifact type>: <text>`, on one line
 * (so no segment holds the separator) and at most `LIMITS.shortText` of text.
 */
export function hopSegment(hop: number, stage: string, type: string, text: string | undefined): string {
  const said = (text ?? '').replace(/\s+/g, ' ').trim();
  return `hop ${hop} ${stage} → ${type}: ${clip(said || DEFAULT_SEGMENT_TEXT, LIMITS.shortText)}`;
}
