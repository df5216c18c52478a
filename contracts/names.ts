/**
 * Names and name patterns the zod schemas share with the rail's own checks. No zod here: workflow
 * code imports this, and the workflow bundle builds no zod schema (src/worker/bundle.ts).
 */
import { LIMITS } from './limits';

export const HANDOFF_V1 = 'handoff.v1';
export const HANDOFF_V2 = 'handoff.v2';

/** Seed 004's reasons for a handover. */
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
export const isId = (value: unknown): value is string => typeof value === 'string' && value.length >= 1 && value.length <= LIMITS.id && ID.test(value);
export const isSlug = (value: unknown): value is string => typeof value === 'string' && value.length >= 1 && value.length <= LIMITS.name && SLUG.test(value);

/** A failure's code: what comes before its first `:` (`off_topic: …` → `off_topic`). */
export const failureCode = (failure: string): string => failure.split(':', 1)[0]?.trim() ?? '';
