/** The package that crosses every hop (`handoff.v1`, with its hop block and summary). */
import { z } from 'zod';
import { LIMITS } from './limits';
import { HANDOFF_REASONS, HANDOFF_V1, HANDOFF_V2 } from './names';
import {
  count,
  id,
  isoTime,
  list,
  nonEmptyText,
  revisions,
  sha256,
  slug,
  text,
  traceparent,
  uri,
  usd,
  visibleName,
} from './primitives';

// Objects are loose everywhere: a v1 reader must pass unknown (newer, optional) fields through.

export const AckState = z.enum([
  'accepted',
  'rejected_schema',
  'rejected_role',
  'rejected_budget',
  'duplicate',
  'max_hops_exceeded',
  'cycle_detected',
  'rejected_invariant',
  /** Another package was already delivered under this delivery key: its result is not this one's. */
  'rejected_conflict',
  /** The stage's output repeats an earlier artifact, or the critic failed it for the same reasons
   * as the last time: the loop is not getting anywhere, so a human decides (before the hop cap). */
  'no_progress',
  /** Nobody picked the hop up (after its retry and its fallback): the package returns to its sender. */
  'target_unavailable',
]);
export type AckState = z.infer<typeof AckState>;

export const ContractError = z.looseObject({
  path: text(LIMITS.shortText),
  message: text(LIMITS.shortText),
});
export type ContractError = z.infer<typeof ContractError>;

/** How a writer's write found in doubt (its request sent, no answer noted) was settled: resent with
 * its key, found or not found by a lookup, or by a human's word (it happened, or send it). */
export const InDoubtResolution = z.enum([
  'resent',
  'found_by_lookup',
  'sent_after_lookup',
  'human_happened',
  'human_send',
]);

/** Where a write in doubt stands, on an ack: `escalated` on the writer's hop that failed
 * WriteInDoubt (the job waits for a human), the human's word on their hop, or how the writer's
 * retried hop settled it; with the write key, the system's reference and the number of sends when known. */
export const AckInDoubt = z.looseObject({
  resolution: z.union([InDoubtResolution, z.literal('escalated')]),
  write_key: text(LIMITS.shortText).optional(),
  reference: text(LIMITS.shortText).optional(),
  sends: count.optional(),
});
export type AckInDoubt = z.infer<typeof AckInDoubt>;

/** On a human's hop about a tool call (per-call approval): the call it asked about, by the rail's
 * digest, and on the decision's ack the word given. */
export const AckToolCall = z.looseObject({
  name: text(LIMITS.shortText),
  digest: text(LIMITS.shortText),
  verdict: z.enum(['approve', 'deny']).optional(),
  /** The human ran it with other arguments. */
  edited: z.boolean().optional(),
});
export type AckToolCall = z.infer<typeof AckToolCall>;

export const AckRecord = z.looseObject({
  ack: AckState,
  stage: slug,
  hop: count,
  reason: text(LIMITS.shortText),
  errors: list(ContractError, LIMITS.ackErrors).optional(),
  invariant: slug.optional(),
  delivery_key: nonEmptyText(LIMITS.shortText),
  traceparent,
  at: isoTime,
  actor: visibleName(LIMITS.id).optional(),
  /** On the rail's record of an accepted hop: what it reserved from the wallet before the work,
   * and what it settled (charged) after; the rest went back to the wallet. */
  reserved_usd: usd.optional(),
  settled_usd: usd.optional(),
  /** The package as delivered at this hop (the per-hop snapshot, contracts/snapshot.ts). */
  snapshot: text(LIMITS.shortText).optional(),
  /** On a writer's hop or a human's, when the write was in doubt: where it stands. */
  in_doubt: AckInDoubt.optional(),
  /** On a human's hop about a tool call: the call, and on the decision the word given. */
  tool_call: AckToolCall.optional(),
});
export type AckRecord = z.infer<typeof AckRecord>;

export const Artifact = z.looseObject({
  type: slug,
  uri,
  hash: sha256.optional(),
  schema: slug.optional(),
});
export type Artifact = z.infer<typeof Artifact>;

export const ToolTried = z.looseObject({
  name: slug,
  ok: z.boolean(),
  error_code: text(LIMITS.name).optional(),
});
export type ToolTried = z.infer<typeof ToolTried>;

/** `none` is the state before any judge ran; a judge says pass or fail. */
export const LastVerdict = z.enum(['pass', 'fail', 'none']);
export type LastVerdict = z.infer<typeof LastVerdict>;

export const Evaluator = z.looseObject({
  last_verdict: LastVerdict,
  failures: list(text(LIMITS.shortText)),
});
export type Evaluator = z.infer<typeof Evaluator>;

/** Never negative: the rail clamps at zero and reports overspend in JobResult.spent_usd. */
export const Budget = z.looseObject({
  usd_remaining: usd,
  revisions_remaining: revisions,
});
export type Budget = z.infer<typeof Budget>;

export const Trace = z.looseObject({
  traceparent,
  tracestate: text(LIMITS.tracestate).optional(),
});
export type Trace = z.infer<typeof Trace>;

/** The typed handoff reasons: the current agent lacks what the task needs
 * (`capability_boundary`), a specialist does it better (`specialization`), the risk calls for a
 * human or a senior (`escalation`), or another agent takes it because this one is unavailable or
 * busy (`load_balancing`). */
export const HandoffReason = z.enum(HANDOFF_REASONS);
export type HandoffReason = z.infer<typeof HandoffReason>;

/** Who handed to whom, why, and the chain so far (for hop caps and cycle detection).
 * Stage ids are slugs: pipelines name their own stages, and an origin like `client` fits. */
/** What the oldest chain entries held once the chain outgrew `LIMITS.chain` and they left it:
 * enough for cycle detection and revisit bounds, which look at the whole chain. */
export const EarlierChain = z.looseObject({
  /** Entries no longer in `chain` (the chain's whole length is `entries + chain.length`). */
  entries: count,
  /** Each stage those entries name, once. */
  stages: list(slug, LIMITS.chain),
  /** How often the whole chain went from one stage straight to another, for each pair whose
   * first entry left the chain (the pair across the cut included). */
  edges: list(z.looseObject({ from: slug, to: slug, times: count.min(1) }), LIMITS.chain),
});
export type EarlierChain = z.infer<typeof EarlierChain>;

export const Hop = z.looseObject({
  from: slug,
  to: slug,
  reason: text(LIMITS.shortText),
  // The bound keeps count + 1 a safe integer; a job's hop cap escalates long before.
  count: count.max(LIMITS.hops),
  /** The newest `LIMITS.chain` entries; `earlier` stands for the rest. */
  chain: list(slug, LIMITS.chain),
  earlier: EarlierChain.optional(),
  /** Why, as one of the typed reasons, when the route says (free text stays in `reason`). */
  handoff_reason: HandoffReason.optional(),
});
export type Hop = z.infer<typeof Hop>;

export const handoffV1 = z.looseObject({
  schema: z.literal(HANDOFF_V1),
  job_id: id,
  goal: nonEmptyText(LIMITS.goal),
  constraints: list(text(LIMITS.shortText)),
  artifacts: list(Artifact),
  open_questions: list(text(LIMITS.shortText)),
  tools_tried: list(ToolTried),
  evaluator: Evaluator,
  budget: Budget,
  memory_refs: list(text(LIMITS.shortText)),
  trace: Trace,
  /** Never authoritative: a hint is not a new goal. */
  next_hint: text(LIMITS.shortText).optional(),
  hop: Hop.optional(),
  /** Accumulated per hop, never re-summarised. */
  summary: text(LIMITS.summary).optional(),
  /** The ack of the hop that delivered this package. */
  ack: AckRecord.optional(),
  /** The address of this package's own snapshot as delivered; the rail
   * sets it on every delivery. */
  context_ref: text(LIMITS.shortText).optional(),
  /** Superseded artifacts moved off the package (the older ones of a type a later stage produced
   * again): how many, and the snapshot of the delivery that still listed them, which names the
   * fold before it in turn. A stage's worker sets it on the package it emits, as the rail checks
   * (contracts/earlier-artifacts.ts), or echoes it; the rail folds for a stage that does not. */
  earlier_artifacts: z
    .looseObject({
      count: count.min(1),
      snapshot: text(LIMITS.shortText),
    })
    .optional(),
});
export type HandoffV1 = z.infer<typeof handoffV1>;

/**
 * The next package version: `base` with its `schema` literal replaced and `fields` added. A field
 * whose name `base` already has is refused when the version is defined (the module fails to load),
 * so a new version can never re-declare a field, i.e. reuse its name for a new meaning.
 * Changing a field's type or meaning needs a new name.
 */
export function nextVersion<S extends z.core.$ZodLooseShape, const V extends string, F extends z.core.$ZodLooseShape>(
  base: z.ZodObject<S, z.core.$loose>,
  schema: V,
  fields: F,
) {
  const reused = Object.keys(fields).filter((name) => Object.prototype.hasOwnProperty.call(base.shape, name));
  if (reused.length > 0)
    throw new Error(`${schema} re-declares ${reused.join(', ')}: a new version may only add fields`);
  return base.extend({ ...fields, schema: z.literal(schema) });
}

/** What handoff.v2 adds to v1; every other field is v1's, unchanged. Required, hence a new version. */
export const handoffV2Fields = {
  /** The pipeline the package travels in (a job request's `pipeline`), so a stage serving several
   * pipelines knows which one's rules the package is under. */
  pipeline: slug,
};

export const handoffV2 = nextVersion(handoffV1, HANDOFF_V2, handoffV2Fields);
export type HandoffV2 = z.infer<typeof handoffV2>;
