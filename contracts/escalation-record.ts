/**
 * Durable escalation records: what a halted job leaves for the next agent or
 * human — a summary, open questions and next steps — kept in the store with an auditable
 * lifecycle. These schemas are the store's inputs and outputs and, later, the HTTP API's
 * request and response bodies. Pure: importable from workflow code.
 *
 * Lifecycle (decideEscalationRecordTransition):
 *   begin                     → open
 *   accept(open)              → accepted by the actor
 *   accept(accepted by X) by X → no change (idempotent success)
 *   accept(accepted by X) by Y → refused `conflict`
 *   cancel(open | accepted)   → cancelled by the actor
 *   close(open | accepted)    → closed, with the reason the job ended (no human actor: the rail)
 *   close as decided by X (open | accepted by X) → closed, accepted by X; accepted by Y → `conflict`
 *   anything on cancelled or closed (the final states) → refused `illegal_transition`
 */
import { z } from 'zod';
import { LIMITS } from './limits';
import { HumanDecision } from './job';
import { escalationRecordId, id, isoTime, list, nonBlankReadableText, inputText, visibleName } from './primitives';

export const ESCALATION_RECORD_STATES = ['open', 'accepted', 'cancelled', 'closed'] as const;
export const EscalationRecordState = z.enum(ESCALATION_RECORD_STATES);
export type EscalationRecordState = z.infer<typeof EscalationRecordState>;

/** Final states: nothing moves a record out of them. */
export const FINAL_ESCALATION_RECORD_STATES: readonly EscalationRecordState[] = ['cancelled', 'closed'];

/** Why the rail closed a record: the job it belongs to was cancelled, decided, or timed out. */
export const EscalationRecordCloseReason = z.enum(['job_cancelled', 'decided', 'timed_out']);
export type EscalationRecordCloseReason = z.infer<typeof EscalationRecordCloseReason>;

export const ESCALATION_RECORD_TRANSITIONS = ['begin', 'accept', 'cancel', 'close'] as const;
export const EscalationRecordTransition = z.enum(ESCALATION_RECORD_TRANSITIONS);
export type EscalationRecordTransition = z.infer<typeof EscalationRecordTransition>;

/** A write's idempotency key (`job_id:escalation:<n>` for a begin, the caller's for a transition):
 * visible characters, no whitespace, room for a job id and a suffix. */
export const ESCALATION_RECORD_KEY_MAX = LIMITS.id * 2;
export const EscalationRecordIdempotencyKey = z
  .string()
  .min(1)
  .max(ESCALATION_RECORD_KEY_MAX)
  .regex(/^[\x21-\x7e]+$/, { message: 'must be printable ASCII without spaces' });

export const EscalationRecordId = escalationRecordId;

const actor = visibleName(LIMITS.id);

/** What beginning a record takes. */
export const EscalationRecordBeginInput = z.strictObject({
  workspace: id,
  project: id,
  job_id: id,
  summary: nonBlankReadableText(LIMITS.summary),
  open_questions: list(nonBlankReadableText(LIMITS.shortText)),
  next_steps: list(nonBlankReadableText(LIMITS.shortText)),
  /** Who may take the record (ownership rules come later); absent means anyone. */
  owner: actor.optional(),
  /** Who began it (the rail, or a human). */
  created_by: actor,
});
export type EscalationRecordBeginInput = z.infer<typeof EscalationRecordBeginInput>;

export const EscalationRecord = z.strictObject({
  id: EscalationRecordId,
  workspace: id,
  project: id,
  job_id: id,
  summary: inputText(LIMITS.summary),
  open_questions: list(inputText(LIMITS.shortText)),
  next_steps: list(inputText(LIMITS.shortText)),
  owner: actor.nullable(),
  state: EscalationRecordState,
  created_by: actor,
  created_at: isoTime,
  accepted_by: actor.nullable(),
  accepted_at: isoTime.nullable(),
  cancelled_by: actor.nullable(),
  cancelled_at: isoTime.nullable(),
  closed_at: isoTime.nullable(),
  close_reason: EscalationRecordCloseReason.nullable(),
});
export type EscalationRecord = z.infer<typeof EscalationRecord>;

/** One line of a record's audit trail: every transition that changed it, in order. */
export const EscalationRecordAuditRow = z.strictObject({
  record_id: EscalationRecordId,
  /** 1 for the begin, then one more per transition. */
  seq: z.int().min(1),
  transition: EscalationRecordTransition,
  /** Null for a close, which the rail makes, unless it closes the record on a human's decision
   * taken through it: then the decider. */
  actor: actor.nullable(),
  at: isoTime,
  idempotency_key: EscalationRecordIdempotencyKey,
  detail: z.strictObject({
    from: EscalationRecordState.nullable(),
    to: EscalationRecordState,
    close_reason: EscalationRecordCloseReason.optional(),
    /** The decision a `decided` close applied through the record. */
    action: HumanDecision.shape.action.optional(),
  }),
});
export type EscalationRecordAuditRow = z.infer<typeof EscalationRecordAuditRow>;

export const ESCALATION_RECORD_LIST_DEFAULT = 50;
export const ESCALATION_RECORD_LIST_MAX = 200;

/** Listing a project's records: open ones by default, newest first. */
export const EscalationRecordListQuery = z.strictObject({
  workspace: id,
  project: id,
  state: EscalationRecordState.optional(),
  limit: z.int().min(1).max(ESCALATION_RECORD_LIST_MAX).optional(),
  /** Only what this user may see: unowned records and their own. Absent: every record. */
  visible_to: actor.optional(),
});
export type EscalationRecordListQuery = z.infer<typeof EscalationRecordListQuery>;

export type EscalationRecordRequest =
  | { transition: 'accept'; actor: string }
  | { transition: 'cancel'; actor: string }
  | { transition: 'close'; reason: EscalationRecordCloseReason; decided_by?: EscalationRecordDecider };

/** Who decided the record's job through it, and what: the close that applies it is conditional on
 * the record still being open to them, so a cancel or another's accept and the decision exclude
 * each other. */
export interface EscalationRecordDecider {
  actor: string;
  action: HumanDecision['action'];
}

export type EscalationRecordRefusalCode = 'not_found' | 'conflict' | 'illegal_transition' | 'key_reused';

export type EscalationRecordTransitionOutcome =
  | { ok: true; change: 'transition'; to: EscalationRecordState }
  | { ok: true; change: 'none' }
  | { ok: false; code: Exclude<EscalationRecordRefusalCode, 'not_found' | 'key_reused'>; message: string };

/** A refused handoff write: nothing was changed. `conflict` maps to HTTP 409 later. */
export class EscalationRecordTransitionError extends Error {
  override readonly name = 'EscalationRecordTransitionError';
  constructor(
    readonly code: EscalationRecordRefusalCode,
    message: string,
  ) {
    super(message);
  }
}

/** Decides a transition on a record in its current state. Pure: the store gathers, this decides. */
export function decideEscalationRecordTransition(
  record: Pick<EscalationRecord, 'id' | 'state' | 'accepted_by'>,
  request: EscalationRecordRequest,
): EscalationRecordTransitionOutcome {
  const { state } = record;
  if (FINAL_ESCALATION_RECORD_STATES.includes(state)) {
    return {
      ok: false,
      code: 'illegal_transition',
      message: `cannot ${request.transition} handoff record ${record.id}: it is already ${state}`,
    };
  }
  switch (request.transition) {
    case 'accept':
      if (state === 'open') return { ok: true, change: 'transition', to: 'accepted' };
      if (record.accepted_by === request.actor) return { ok: true, change: 'none' };
      return {
        ok: false,
        code: 'conflict',
        message: `handoff record ${record.id} was already accepted by ${record.accepted_by ?? 'someone else'}`,
      };
    case 'cancel':
      return { ok: true, change: 'transition', to: 'cancelled' };
    case 'close':
      if (request.decided_by && state === 'accepted' && record.accepted_by !== request.decided_by.actor) {
        return {
          ok: false,
          code: 'conflict',
          message: `handoff record ${record.id} was accepted by ${record.accepted_by ?? 'someone else'}; a decision by ${request.decided_by.actor} is not taken through it`,
        };
      }
      return { ok: true, change: 'transition', to: 'closed' };
  }
}

// ---- The HTTP API's request and response bodies (src/servers/handoffs-api.ts) ----

/** The body of `POST /workspaces/:ws/projects/:p/handoffs`: the workspace and project come
 * from the path and `created_by` is the authenticated caller, so neither may be sent. */
export const EscalationRecordBeginRequest = EscalationRecordBeginInput.omit({
  workspace: true,
  project: true,
  created_by: true,
});
export type EscalationRecordBeginRequest = z.infer<typeof EscalationRecordBeginRequest>;

/** `POST /handoffs/:id/accept` and `/cancel` take no body (the actor is the caller); an empty
 * JSON object is allowed, any field is refused. */
export const EscalationRecordTransitionRequest = z.strictObject({}).nullish();

/** The body of `POST /handoffs/:id/decide`: a decision without its actor, which is always the
 * authenticated caller on this path, and without its record, which is the path's. */
export const EscalationRecordDecideRequest = z.strictObject(
  HumanDecision.omit({ actor: true, handoff_record: true }).shape,
);
export type EscalationRecordDecideRequest = z.infer<typeof EscalationRecordDecideRequest>;

/** What `decide` answers: the record (accepted by the caller) and the rail's receipt. */
export const EscalationRecordDecideResponse = z.strictObject({
  record: EscalationRecord,
  decision: z.strictObject({ action: HumanDecision.shape.action, actor: visibleName(LIMITS.id), next: z.string() }),
});
export type EscalationRecordDecideResponse = z.infer<typeof EscalationRecordDecideResponse>;

/** `Idempotency-Key` as a caller sends it: the server prefixes it with the caller's name
 * (`api/<user>/<key>`), which must still fit EscalationRecordIdempotencyKey. */
export const HANDOFF_API_KEY_MAX = ESCALATION_RECORD_KEY_MAX - LIMITS.id - 5;
export const HandoffApiIdempotencyKey = EscalationRecordIdempotencyKey.max(HANDOFF_API_KEY_MAX);

export const EscalationRecordListParams = z.strictObject({ ws: id, p: id });
export const EscalationRecordParams = z.strictObject({ id: EscalationRecordId });

/** The list route's query string: values arrive as text, so `limit` is coerced. */
export const EscalationRecordListQueryString = z.strictObject({
  state: EscalationRecordState.optional(),
  limit: z.coerce.number().int().min(1).max(ESCALATION_RECORD_LIST_MAX).optional(),
});

export const EscalationRecordListResponse = z.strictObject({ handoffs: z.array(EscalationRecord) });
export type EscalationRecordListResponse = z.infer<typeof EscalationRecordListResponse>;

/** Every 4xx/5xx body of the API. `issues` lists what failed validation (400 only). */
export const HandoffApiError = z.strictObject({
  error: z.string(),
  message: z.string(),
  issues: z.array(z.strictObject({ path: z.string(), message: z.string() })).optional(),
});
export type HandoffApiError = z.infer<typeof HandoffApiError>;

// ---- Earlier names, kept so code written against them still compiles ----
// The escalation record was called a "handoff record" in code; the records API's paths and the
// CLI still say `handoffs`. Each name below is the same value or type under its old name.

/** @deprecated Use ESCALATION_RECORD_STATES. */
export const HANDOFF_RECORD_STATES = ESCALATION_RECORD_STATES;
/** @deprecated Use EscalationRecordState. */
export const HandoffRecordState = EscalationRecordState;
/** @deprecated Use EscalationRecordState. */
export type HandoffRecordState = EscalationRecordState;
/** @deprecated Use FINAL_ESCALATION_RECORD_STATES. */
export const FINAL_HANDOFF_STATES = FINAL_ESCALATION_RECORD_STATES;
/** @deprecated Use EscalationRecordCloseReason. */
export const HandoffCloseReason = EscalationRecordCloseReason;
/** @deprecated Use EscalationRecordCloseReason. */
export type HandoffCloseReason = EscalationRecordCloseReason;
/** @deprecated Use ESCALATION_RECORD_TRANSITIONS. */
export const HANDOFF_TRANSITIONS = ESCALATION_RECORD_TRANSITIONS;
/** @deprecated Use EscalationRecordTransition. */
export const HandoffTransition = EscalationRecordTransition;
/** @deprecated Use EscalationRecordTransition. */
export type HandoffTransition = EscalationRecordTransition;
/** @deprecated Use ESCALATION_RECORD_KEY_MAX. */
export const HANDOFF_KEY_MAX = ESCALATION_RECORD_KEY_MAX;
/** @deprecated Use EscalationRecordIdempotencyKey. */
export const HandoffIdempotencyKey = EscalationRecordIdempotencyKey;
/** @deprecated Use EscalationRecordId. */
export const HandoffRecordId = EscalationRecordId;
/** @deprecated Use EscalationRecordBeginInput. */
export const HandoffBeginInput = EscalationRecordBeginInput;
/** @deprecated Use EscalationRecordBeginInput. */
export type HandoffBeginInput = EscalationRecordBeginInput;
/** @deprecated Use EscalationRecord. */
export const HandoffRecord = EscalationRecord;
/** @deprecated Use EscalationRecord. */
export type HandoffRecord = EscalationRecord;
/** @deprecated Use EscalationRecordAuditRow. */
export const HandoffAuditRow = EscalationRecordAuditRow;
/** @deprecated Use EscalationRecordAuditRow. */
export type HandoffAuditRow = EscalationRecordAuditRow;
/** @deprecated Use ESCALATION_RECORD_LIST_DEFAULT. */
export const HANDOFF_LIST_DEFAULT = ESCALATION_RECORD_LIST_DEFAULT;
/** @deprecated Use ESCALATION_RECORD_LIST_MAX. */
export const HANDOFF_LIST_MAX = ESCALATION_RECORD_LIST_MAX;
/** @deprecated Use EscalationRecordListQuery. */
export const HandoffListQuery = EscalationRecordListQuery;
/** @deprecated Use EscalationRecordListQuery. */
export type HandoffListQuery = EscalationRecordListQuery;
/** @deprecated Use EscalationRecordRequest. */
export type HandoffRequest = EscalationRecordRequest;
/** @deprecated Use EscalationRecordDecider. */
export type HandoffDecider = EscalationRecordDecider;
/** @deprecated Use EscalationRecordRefusalCode. */
export type HandoffRefusalCode = EscalationRecordRefusalCode;
/** @deprecated Use EscalationRecordTransitionOutcome. */
export type HandoffDecision = EscalationRecordTransitionOutcome;
/** @deprecated Use EscalationRecordTransitionError. */
export const HandoffTransitionError = EscalationRecordTransitionError;
/** @deprecated Use EscalationRecordTransitionError. */
export type HandoffTransitionError = EscalationRecordTransitionError;
/** @deprecated Use decideEscalationRecordTransition. */
export const decideHandoffTransition = decideEscalationRecordTransition;
/** @deprecated Use EscalationRecordBeginRequest. */
export const HandoffBeginRequest = EscalationRecordBeginRequest;
/** @deprecated Use EscalationRecordBeginRequest. */
export type HandoffBeginRequest = EscalationRecordBeginRequest;
/** @deprecated Use EscalationRecordTransitionRequest. */
export const HandoffTransitionRequest = EscalationRecordTransitionRequest;
/** @deprecated Use EscalationRecordDecideRequest. */
export const HandoffDecideRequest = EscalationRecordDecideRequest;
/** @deprecated Use EscalationRecordDecideRequest. */
export type HandoffDecideRequest = EscalationRecordDecideRequest;
/** @deprecated Use EscalationRecordDecideResponse. */
export const HandoffDecideResponse = EscalationRecordDecideResponse;
/** @deprecated Use EscalationRecordDecideResponse. */
export type HandoffDecideResponse = EscalationRecordDecideResponse;
/** @deprecated Use EscalationRecordListParams. */
export const HandoffListParams = EscalationRecordListParams;
/** @deprecated Use EscalationRecordParams. */
export const HandoffRecordParams = EscalationRecordParams;
/** @deprecated Use EscalationRecordListQueryString. */
export const HandoffListQueryString = EscalationRecordListQueryString;
/** @deprecated Use EscalationRecordListResponse. */
export const HandoffListResponse = EscalationRecordListResponse;
/** @deprecated Use EscalationRecordListResponse. */
export type HandoffListResponse = EscalationRecordListResponse;
