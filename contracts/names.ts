/**
 * Names and name patterns the zod schemas share with the rail's own checks. No zod here: workflow
 * code imports this, and the workflow bundle builds no zod schema (src/worker/bundle.ts).
 */
import { LIMITS } from './limits';

export const HANDOFF_V1 = 'handoff.v1';
export const HANDOFF_V2 = 'handoff.v2';

/** The typed reasons a route gives for a hop (`hop.handoff_reason`). */
export const HANDOFF_REASONS = ['capability_boundary', 'specialization', 'escalation', 'load_balancing'] as const;

/** No `:` so `job_id:stage:...` keys stay parseable; no whitespace so ids survive logs and URLs. */
export const ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.\-]*$/;

/** Stage names, artifact types, tool names: lowercase slugs, open-ended so pipeline authors can
 * add stages and artifact types without a contract change. */
export const SLUG_PATTERN = /^[a-z][a-z0-9_.\-]*$/;

// The checks test private copies: the workflow bundle shares this module across runs and the SDK
// freezes its exports, and V8 runs a frozen RegExp on its slow path (about 1.4× per test).
const ID = new RegExp(ID_PATTERN);
const SLUG = new RegExp(SLUG_PATTERN);

// Any value: a pipeline written in plain JS may hand in a missing name, which is a problem to list, not a crash.
export const isId = (value: unknown): value is string =>
  typeof value === 'string' && value.length >= 1 && value.length <= LIMITS.id && ID.test(value);
export const isSlug = (value: unknown): value is string =>
  typeof value === 'string' && value.length >= 1 && value.length <= LIMITS.name && SLUG.test(value);

/** Bidi embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069), as pattern text: they
 * reorder the text after them until their end, so `refund \u202e000,01$ ot pu` reads as another
 * amount. The marks (U+200E, U+200F, U+061C) are not among them: they only place neutral
 * characters between runs, never reverse one, and are what right-to-left writers type to get
 * punctuation right. */
export const BIDI_CONTROLS = '\\u202A-\\u202E\\u2066-\\u2069';

// A private copy, like ID and SLUG above.
const BIDI_CONTROL = new RegExp(`[${BIDI_CONTROLS}]`, 'gu');

/** Text the rail shows but cannot refuse (a stage's output, a caller's entry): each bidi
 * embedding, override or isolate becomes U+FFFD, visible where it was and reordering nothing. */
export const neutraliseBidi = (text: string): string => text.replace(BIDI_CONTROL, '\uFFFD');

/** A failure's code: what comes before its first `:` (`off_topic: …` → `off_topic`). */
export const failureCode = (failure: string): string => failure.split(':', 1)[0]?.trim() ?? '';
