/** Bodies of the typed artifacts a package points at (stored by URI, never inlined). */
import { z } from 'zod';
import { Artifact, InDoubtResolution } from './handoff';
import { LIMITS } from './limits';
import { isoTime, list, nonEmptyText, sha256, slug, text } from './primitives';

/** `summary_md`: a markdown summary and the citation keys it cites. */
export const SummaryMd = z.looseObject({
  markdown: nonEmptyText(LIMITS.markdown),
  cited_keys: list(slug),
});
export type SummaryMd = z.infer<typeof SummaryMd>;

/** `verdict.v1`: a critic's rubric result. */
export const VerdictV1 = z.looseObject({
  verdict: z.enum(['pass', 'fail']),
  scores: z
    .record(slug, z.number())
    .refine((s) => Object.keys(s).length <= LIMITS.scores, { message: `at most ${LIMITS.scores} scores` })
    // z.record has no size check; this carries the cap into JSON Schema.
    .meta({ maxProperties: LIMITS.scores }),
  failures: list(text(LIMITS.shortText)),
});
export type VerdictV1 = z.infer<typeof VerdictV1>;

/** A write key: `job_id:stage:artifact_type`, one write per key whatever the attempt. */
export const writeKeyText = z
  .string()
  .max(LIMITS.shortText)
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.\-]*:[a-z][a-z0-9_.\-]*:[a-z][a-z0-9_.\-]*$/);

/**
 * What a writer's write left, whatever the system: the job's result carries it. The write is
 * made at most once per `write_key`; `status` says whether this call made it (`created`) or found
 * the key already holding it (`existing`, every other field as the first call recorded them).
 */
export const WriteReceipt = z.looseObject({
  write_key: writeKeyText,
  /** The system written: the writer card's `writes`. */
  system: slug,
  /** What the write touched in that system, as the writer names it (a record id, a path). */
  reference: nonEmptyText(LIMITS.shortText),
  /** sha256 of what was written, as the writer handed it over (absent on writes recorded before
   * the hash was kept). */
  payload_hash: sha256.optional(),
  status: z.enum(['created', 'existing']),
  written_at: isoTime,
  /** Set when the write was found in doubt (its request sent, no answer noted) and settled: how
   * (resent with its key, found or not found by a lookup, or a human's "it happened" / "send it"),
   * and how many times the request went out in all. */
  in_doubt: z
    .looseObject({
      resolution: InDoubtResolution,
      sends: z.int().min(1),
    })
    .optional(),
});
export type WriteReceipt = z.infer<typeof WriteReceipt>;

/** A fan-out's merge, under the type its pipeline names (e.g. `context.v1`): the artifact each
 * specialist emitted, by reference, in the fan-out's order. The rail makes it, never a model. */
export const MergedBranches = z.looseObject({
  /** The type the hub fanned out. */
  after: slug,
  branches: list(z.looseObject({ stage: slug, artifact: Artifact })).min(1),
});
export type MergedBranches = z.infer<typeof MergedBranches>;
