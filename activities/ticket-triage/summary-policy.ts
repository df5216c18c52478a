/** What draft and judge agree on about a triage summary: citation syntax, length, refund promises. */
import type { Chunk } from '../../contracts/pipelines/ticket-artifacts';
import { CONSTRAINT_POLICIES, searchTerms } from '../../src';

/** `[article-slug.n]`; a markdown link `[text](url)` is not a citation. */
const CITATION = /\[([a-z][a-z0-9_.-]*\.\d+)\](?!\()/g;

export const SUMMARY_MIN_CHARS = 80;
export const SUMMARY_MAX_CHARS = 2_000;

/** Judge failure codes (`code: detail`); the drafter reads the codes when revising. */
export const FAILURE = {
  citationUnknown: 'citation_unknown',
  citationMissing: 'citation_missing',
  noMatchMissing: 'no_match_missing',
  refundPromise: 'refund_promise',
  constraintBreach: 'constraint_breach',
  tooLong: 'too_long',
  tooShort: 'too_short',
  offTopic: 'off_topic',
} as const;

export function citedKeys(markdown: string): string[] {
  return [...new Set([...markdown.matchAll(CITATION)].map((m) => m[1] as string))];
}

const refundPolicy = CONSTRAINT_POLICIES.find((p) => p.id === 'no_refund_promises');
if (!refundPolicy) throw new Error('contracts/constraints no longer defines no_refund_promises');
const noRefundPromises = refundPolicy;

/** The refund promise in `text`, or null. Checked on every summary, whatever the job's constraints:
 * triage notes never commit the billing team. */
export function refundPromise(text: string): string | null {
  return noRefundPromises.breach({ text, toolsUsed: [] });
}

/** Crude stems (common suffix off, first five letters) so "plans"/"plan" and "refundable"/"refund" meet. */
export function stems(text: string): Set<string> {
  return new Set(searchTerms(text, 64).map(stem));
}

function stem(word: string): string {
  const base = word.replace(/(?:able|ing|ed|es|ly|s)$/, '');
  return (base.length >= 3 ? base : word).slice(0, 5);
}

/** The retrieval result a summary is written from: cited passages, or the reason there are none. */
export type Retrieval = { kind: 'chunks'; chunks: Chunk[] } | { kind: 'no_hit'; reason: string };
