/** The job API, public names other tools depend on: `handoffJob` input/result and the `decide` update. */
import { z } from 'zod';
import { WriteReceipt } from './artifacts';
import { AckRecord, handoffV1 } from './handoff';
import { LIMITS, MICROS_PER_USD } from './limits';
import {
  count,
  escalationRecordId,
  id,
  inputText,
  list,
  nonBlankText,
  readableText,
  revisions,
  slug,
  text,
  traceparent,
  usd,
  visibleName,
} from './primitives';

export const JobRequest = z.looseObject({
  job_id: id,
  /** The pipeline that runs the job (contracts/pipeline.ts); the worker's first pipeline when absent. */
  pipeline: slug.optional(),
  /** The job's entry: the body of its first package, which the rail checks against the
   * pipeline's entry schema. A pipeline may name an older request field that carried it
   * (`EntrySpec.alias`), read when `entry` is absent. */
  entry: z.unknown().optional(),
  goal: nonBlankText(LIMITS.goal),
  constraints: list(inputText(LIMITS.shortText)),
  budget: z.looseObject({ usd, revisions }),
  /** Transfers allowed before escalation; the rail defaults to 8. */
  max_hops: z.int().min(1).max(LIMITS.hops).optional(),
  /** Taken from the caller when present, else created at intake. */
  traceparent: traceparent.optional(),
  /** The API user who owns the job's escalation records: only they (or root) see them.
   * Absent, every API user does. */
  owner: visibleName(LIMITS.id).optional(),
  /** How long an escalation waits for a human `decide` before the job ends as `escalated`,
   * as a Temporal duration string (`30s`, `4h`, `7 days`); the rail defaults to 7 days. */
  decision_timeout: z
    .string()
    .max(32)
    .regex(/^\d+(?:\.\d+)?\s*(?:ms|s|m|h|d|w|seconds?|minutes?|hours?|days?|weeks?)$/)
    .optional(),
  /** When a run of the job continues as new (same job id, same queries): once its history holds
   * `events` events or it took `updates` decisions, whichever comes first; Temporal's own
   * suggestion (history size or length) always counts. The rail defaults to 10,000 events and
   * 1,000 decisions, below Temporal's 10,240-event warning and 2,000 updates per run; tests set
   * them low to see a job continue. */
  continue_after: z.strictObject({ events: z.int().min(1).optional(), updates: z.int().min(1).optional() }).optional(),
  /** Set when the job is a fork of another (`forkJob`): it starts from the package the parent's
   * rail recorded at one of its hops, or an edit of it, instead of from `entry` alone. */
  fork: z
    .strictObject({
      /** The parent job. */
      of: id,
      /** The parent's hop the fork starts from. */
      hop: count,
      /** That hop's snapshot address, `handrail://snapshots/<of>/<sha256>`. */
      snapshot: text(LIMITS.uri),
      /** The snapshot's package, which the rail checks against the address. */
      parent: z.record(z.string(), z.unknown()),
      /** An edited package to start from instead; validated and acked like any delivery. */
      package: z.record(z.string(), z.unknown()).optional(),
    })
    .optional(),
});
export type JobRequest = z.infer<typeof JobRequest>;

/** What a run of a job hands the next when it continues as new, between two steps (no hop running,
 * so no reservation held; no escalation open): the new run takes it as its second input and checks
 * it like any input. Acks beyond the newest `LIMITS.acks` are kept as a count per kind. */
export const CarriedJob = z.strictObject({
  /** Runs of the job before the one this starts. */
  runs: count.min(1),
  package: handoffV1,
  stage: text(LIMITS.name * 4),
  traceparent,
  /** Bodies of the newest artifact of each type (routing reads them). */
  bodies: z.record(z.string().max(LIMITS.name), z.record(z.string(), z.unknown())),
  spent_usd: usd,
  overspent_usd: usd,
  receipt: WriteReceipt.optional(),
  acks: list(AckRecord, LIMITS.acks),
  /** Acks of earlier runs no longer kept, counted by kind. */
  earlier_acks: z.record(z.string().max(LIMITS.name), count),
  /** Per hop that ran: the handover its stage got and the job's log after it (the details). */
  handovers: list(
    z.strictObject({
      hop: count,
      stage: text(LIMITS.name * 4),
      used: text(LIMITS.name).optional(),
      tokens: count.optional(),
      fell_back: z.boolean().optional(),
      transcript: text(LIMITS.uri).optional(),
    }),
    LIMITS.acks,
  ),
  snapshots: list(z.strictObject({ uri: text(LIMITS.uri), content: z.string() }), 16),
  last_actor: text(LIMITS.id),
  count_at_last_human_decision: count,
  escalations: count,
  /** URIs and hashes of outputs stages moved off the package (the newest kept): no revision repeats them. */
  moved_outputs: list(text(LIMITS.uri), LIMITS.movedOutputs).optional(),
});
export type CarriedJob = z.infer<typeof CarriedJob>;

export const JobStatus = z.enum(['completed', 'escalated', 'rejected', 'cancelled']);
export type JobStatus = z.infer<typeof JobStatus>;

export const JobResult = z.looseObject({
  job_id: id,
  status: JobStatus,
  package: handoffV1,
  /** The newest `LIMITS.acks` acks of the job, across its runs. */
  acks: list(AckRecord, LIMITS.acks),
  /** Acks older than those, counted by kind (a long job; absent when `acks` holds them all). */
  earlier_acks: z.record(z.string().max(LIMITS.name), count).optional(),
  /** The writer's receipt, when the job wrote: whatever the system, the write-once helper's. */
  receipt: WriteReceipt.optional(),
  spent_usd: usd,
  /** What a stage spent beyond the wallet (the wallet is clamped at zero; this is never hidden). */
  overspent_usd: usd.optional(),
  hops: count,
  /** How many runs the job took, when it continued as new (absent: one). */
  runs: count.optional(),
  /** Why the job ended: completion, escalation reason, rejecting actor, cancellation. */
  reason: text(LIMITS.shortText).optional(),
});
export type JobResult = z.infer<typeof JobResult>;

/** `stageHop`'s input: one package delivered to one stage from outside the rail. This is the
 * envelope; the package itself is checked by the hop and acked. */
export const StageHopRequest = z.looseObject({
  stage: z.string().max(200),
  package: z.unknown().refine((p) => p !== undefined, 'is required'),
  /** The pipeline whose stage this is; the worker's first pipeline when absent. */
  pipeline: z.string().max(64).optional(),
  /** Caller's id for this delivery (also a good workflow id); recorded, never trusted as the key.
   * It becomes part of the hop's reason, so it must be text a package can carry. */
  delivery_id: inputText(LIMITS.id).optional(),
  max_hops: z.int().min(1).max(LIMITS.hops).optional(),
});
/** Spelled out: zod reads a required unknown as `{} | null`, and a caller may hand in any value. */
export interface StageHopRequest {
  stage: string;
  package: unknown;
  pipeline?: string;
  delivery_id?: string;
  max_hops?: number;
}

/** A human's answer to an escalation: another typed hop. Which fields an action needs
 * (e.g. `usd`/`revisions` for `top_up`) is the `decide` update validator's call. */
export const HumanDecision = z.looseObject({
  action: z.enum(['approve', 'reject', 'revise', 'top_up']),
  actor: visibleName(LIMITS.id),
  note: readableText(LIMITS.decisionNote).optional(),
  /** A top-up below the wallet's unit would be recorded yet change nothing. */
  usd: usd
    .refine((v) => v === 0 || v * MICROS_PER_USD >= 1, { message: 'must be 0 or at least one micro-dollar (0.000001)' })
    // Refinements do not reach JSON Schema; this carries the same rule into the generated file.
    .meta({ not: { exclusiveMinimum: 0, exclusiveMaximum: 1 / MICROS_PER_USD } })
    .optional(),
  revisions: revisions.optional(),
  /** The escalation record the decision was taken through (the HTTP API sets it): the job refuses
   * it unless that is the record of the escalation it waits on. */
  handoff_record: escalationRecordId.optional(),
  /** On an approve of an escalated writer whose write is in doubt: the human's word on it. It
   * happened (the system's reference for it, adopted and nothing sent), or send it (once). */
  in_doubt: z
    .union([z.strictObject({ happened: readableText(LIMITS.shortText) }), z.strictObject({ send: z.literal(true) })])
    .optional(),
  /** On an approve of an escalation that waits on a tool call: the human's word on that call,
   * bound to it by the digest the escalation shows. `approve` runs it once (with `args` instead of
   * the model's where the grant allows edits), `deny` hands the model the denial (with the
   * decision's note) as the tool's error. */
  tool_call: z
    .strictObject({
      digest: z.string().regex(/^sha256:[0-9a-f]{64}$/),
      verdict: z.enum(['approve', 'deny']),
      /** Approve with other arguments, where the tool's grant allows edits (`approvalEdits`). */
      args: z.record(z.string(), z.unknown()).optional(),
    })
    .optional(),
});
export type HumanDecision = z.infer<typeof HumanDecision>;
