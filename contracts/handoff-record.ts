/**
 * Durable escalation records: what a halted job leaves for the next agent or
 * human — a summary, open questions and next steps — kept in the store with an auditable
 * lifecycle. These schemas are the store's inputs and outputs and, later, the HTTP API's
 * request and response bodies. Pure: importable from workflow code.
 *
 * Lifecycle (decideHandoffTransition):
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
import { handoffRecordId, id, isoTime, list, nonBlankReadableText, inputText, visibleName } from './primitives';

export const HANDOFF_RECORD_STATES = ['open', 'accepted', 'cancelled', 'closed'] as const;
export const HandoffRecordState = z.enum(HANDOFF_RECORD_STATES);
export type HandoffRecordState = z.infer<typeof HandoffRecordState>;

/** Final states: nothing moves a record out of them. */
export const FINAL_HANDOFF_STATES: readonly HandoffRecordState[] = ['cancelled', 'closed'];

/** Why the rail closed a record: the job it belongs to was cancelled, decided, or timed out. */
export const HandoffCloseReason = z.enum(['job_cancelled', 'decided', 'timed_out']);
export type HandoffCloseReason = z.infer<typeof HandoffCloseReason>;

export const HANDOFF_TRANSITIONS = ['begin', 'accept', 'cancel', 'close'] as const;
export const HandoffTransition = z.enum(HANDOFF_TRANSITIONS);
export type HandoffTransition = z.infer<typeof HandoffTransition>;

/** A write's idempotency key (`job_id:escalation:<n>` for a begin, the caller's for a transition):
 * visible characters, no whitespace, room for a job id and a suffix. */
export const HANDOFF_KEY_MAX = LIMITS.id * 2;
export const HandoffIdempotencyKey = z
  .string()
  .min(1)
  .max(HANDOFF_KEY_MAX)
  .regex(/^[\x21-\x7e]+$/, { message: 'must be printable ASCII without spaces' });

export const HandoffRecordId = handoffRecordId;

const actor = visibleName(LIMITS.id);

/** What beginning a record takes. */
export const HandoffBeginInput = z.strictObject({
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
export type HandoffBeginInput = z.infer<typeof HandoffBeginInput>;

export const HandoffRecord = z.strictObject({
  id: HandoffRecordId,
  workspace: id,
  project: id,
  job_id: id,
  summary: inputText(LIMITS.summary),
  open_questions: list(inputText(LIMITS.shortText)),
  next_steps: list(inputText(LIMITS.shortText)),
  owner: actor.nullable(),
  state: HandoffRecordState,
  created_by: actor,
  created_at: isoTime,
  accepted_by: actor.nullable(),
  accepted_at: isoTime.nullable(),
  cancelled_by: actor.nullable(),
  cancelled_at: isoTime.nullable(),
  closed_at: isoTime.nullable(),
  close_reason: HandoffCloseReason.nullable(),
});
export type HandoffRecord = z.infer<typeof HandoffRecord>;

/** One line of a record's audit trail: every transition that changed it, in order. */
export const HandoffAuditRow = z.strictObject({
  record_id: HandoffRecordId,
  /** 1 for the begin, then one more per transition. */
  seq: z.int().min(1),
  transition: HandoffTransition,
  /** Null for a close, which the rail makes, unless it closes the record on a human's decision
   * taken through it: then the decider. */
  actor: actor.nullable(),
  at: isoTime,
  idempotency_key: HandoffIdempotencyKey,
  detail: z.strictObject({
    from: HandoffRecordState.nullable(),
    to: HandoffRecordState,
    close_reason: HandoffCloseReason.optional(),
    /** The decision a `decided` close applied through the record. */
    action: HumanDecision.shape.action.optional(),
  }),
});
export type HandoffAuditRow = z.infer<typeof HandoffAuditRow>;

export const HANDOFF_LIST_DEFAULT = 50;
export const HANDOFF_LIST_MAX = 200;

/** Listing a project's records: open ones by default, newest first. */
export const HandoffListQuery = z.strictObject({
  workspace: id,
  project: id,
  state: HandoffRecordState.optional(),
  limit: z.int().min(1).max(HANDOFF_LIST_MAX).optional(),
  /** Only what this user may see: unowned records and their own. Absent: every record. */
  visible_to: actor.optional(),
});
export type HandoffListQuery = z.infer<typeof HandoffListQuery>;

export type HandoffRequest =
  | { transition: 'accept'; actor: string }
  | { transition: 'cancel'; actor: string }
  | { transition: 'close'; reason: HandoffCloseReason; decided_by?: HandoffDecider };

/** Who decided the record's job through it, and what: the close that applies it is conditional on
 * the record still being open to them, so a cancel or another's accept and the decision exclude
 * each other. */
export interface HandoffDecider {
  actor: string;
  action: HumanDecision['action'];
}

export type HandoffRefusalCode = 'not_found' | 'conflict' | 'illegal_transition' | 'key_reused';

export type HandoffDecision =
  | { ok: true; change: 'transition'; to: HandoffRecordState }
  | { ok: true; change: 'none' }
  | { ok: false; code: Exclude<HandoffRefusalCode, 'not_found' | 'key_reused'>; message: string };

/** A refused handoff write: nothing was changed. `conflict` maps to HTTP 409 later. */
export class HandoffTransitionError extends Error {
  override readonly name = 'HandoffTransitionError';
  constructor(
    readonly code: HandoffRefusalCode,
    message: string,
  ) {
    super(message);
  }
}

/** Decides a transition on a record in its current state. Pure: the store gathers, this decides. */
export function decideHandoffTransition(
  record: Pick<HandoffRecord, 'id' | 'state' | 'accepted_by'>,
  request: HandoffRequest,
): HandoffDecision {
  const { state } = record;
  if (FINAL_HANDOFF_STATES.includes(state)) {
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
export const HandoffBeginRequest = HandoffBeginInput.omit({ workspace: true, project: true, created_by: true });
export type HandoffBeginRequest = z.infer<typeof HandoffBeginRequest>;

/** `POST /handoffs/:id/accept` and `/cancel` take no body (the actor is the caller); an empty
 * JSON object is allowed, any field is refused. */
export const HandoffTransitionRequest = z.strictObject({}).nullish();

/** The body of `POST /handoffs/:id/decide`: a decision without its actor, which is always the
 * authenticated caller on this path, and without its record, which is the path's. */
export const HandoffDecideRequest = z.strictObject(HumanDecision.omit({ actor: true, handoff_record: true }).shape);
export type HandoffDecideRequest = z.infer<typeof HandoffDecideRequest>;

/** What `decide` answers: the record (accepted by the caller) and the rail's receipt. */
export const HandoffDecideResponse = z.strictObject({
  record: HandoffRecord,
  decision: z.strictObject({ action: HumanDecision.shape.action, actor: visibleName(LIMITS.id), next: z.string() }),
});
export type HandoffDecideResponse = z.infer<typeof HandoffDecideResponse>;

/** `Idempotency-Key` as a caller sends it: the server prefixes it with the caller's name
 * (`api/<user>/<key>`), which must still fit HandoffIdempotencyKey. */
export const HANDOFF_API_KEY_MAX = HANDOFF_KEY_MAX - LIMITS.id - 5;
export const HandoffApiIdempotencyKey = HandoffIdempotencyKey.max(HANDOFF_API_KEY_MAX);

export const HandoffListParams = z.strictObject({ ws: id, p: id });
export const HandoffRecordParams = z.strictObject({ id: HandoffRecordId });

/** The list route's query string: values arrive as text, so `limit` is coerced. */
export const HandoffListQueryString = z.strictObject({
  state: HandoffRecordState.optional(),
  limit: z.coerce.number().int().min(1).max(HANDOFF_LIST_MAX).optional(),
});

export const HandoffListResponse = z.strictObject({ handoffs: z.array(HandoffRecord) });
export type HandoffListResponse = z.infer<typeof HandoffListResponse>;

/** Every 4xx/5xx body of the API. `issues` lists what failed validation (400 only). */
export const HandoffApiError = z.strictObject({
  error: z.string(),
  message: z.string(),
  issues: z.array(z.strictObject({ path: z.string(), message: z.string() })).optional(),
});
export type HandoffApiError = z.infer<typeof HandoffApiError>;
