/**
 * The bodies of the built-in ticket pipelines' artifacts (zod), from the ticket a job starts
 * with to the CRM receipt its writer leaves. The rail knows none of them: the pipelines declare
 * `ticket.raw` as their entry, and their stages read and write the rest.
 */
import { z } from 'zod';
import {
  SummaryMd,
  VerdictV1,
  type JobRequest,
  count,
  id,
  inputText,
  isoTime,
  list,
  nonEmptyText,
  sha256,
  slug,
  text,
} from '../index';
import { LIMITS } from '../rail';

/** Caps on a ticket's text: a ticket over them is refused at the start, never truncated. */
export const TICKET_LIMITS = { subject: 300, body: 8_000, chunkText: 4_000 } as const;

/** `ticket.raw`: the ticket as the caller submitted it (the job request's entry). */
export const TicketRaw = z.looseObject({
  id,
  customer_id: id,
  subject: inputText(TICKET_LIMITS.subject),
  body: inputText(TICKET_LIMITS.body),
  channel: slug.optional(),
  received_at: isoTime.optional(),
});
export type TicketRaw = z.infer<typeof TicketRaw>;

export const Risk = z.enum(['low', 'medium', 'high']);
export type Risk = z.infer<typeof Risk>;
export const Sentiment = z.enum(['negative', 'neutral', 'positive']);
export type Sentiment = z.infer<typeof Sentiment>;

/** `intake.v1`: the classified ticket that retrieval works from. */
export const IntakeV1 = z.looseObject({
  ticket_id: id,
  customer_id: id,
  question: nonEmptyText(LIMITS.shortText),
  /** BCP 47 tag, e.g. `en`, `fr-CA`. */
  language: z
    .string()
    .regex(/^[A-Za-z]{2,3}(?:-[A-Za-z0-9]{2,8})*$/)
    .max(35),
  intent: slug,
  risk: Risk,
  sentiment: Sentiment,
  open_questions: list(text(LIMITS.shortText)),
});
export type IntakeV1 = z.infer<typeof IntakeV1>;

export const Chunk = z.looseObject({
  /** Citation key the draft must cite. */
  key: slug,
  title: text(LIMITS.shortText),
  text: text(TICKET_LIMITS.chunkText),
  score: z.number(),
});
export type Chunk = z.infer<typeof Chunk>;

/** `chunks.v1`: at least one help-center hit; zero hits is a `no_hit.v1` instead. */
export const ChunksV1 = z.looseObject({
  query: nonEmptyText(LIMITS.shortText),
  chunks: list(Chunk).min(1),
});
export type ChunksV1 = z.infer<typeof ChunksV1>;

/** `no_hit.v1`: retrieval found nothing citable; the draft says so instead of inventing. */
export const NoHitV1 = z.looseObject({
  query: nonEmptyText(LIMITS.shortText),
  reason: text(LIMITS.shortText),
});
export type NoHitV1 = z.infer<typeof NoHitV1>;

/** `receipt.v1`: what the ticket pipelines' writer wrote to the CRM. `idempotency_key` =
 * `job_id:stage:artifact_type`. The job's result carries the generic `WriteReceipt` of the
 * same write. */
export const ReceiptV1 = z.looseObject({
  idempotency_key: z
    .string()
    .max(LIMITS.shortText)
    .regex(/^[A-Za-z0-9][A-Za-z0-9_.\-]*:[a-z][a-z0-9_.\-]*:[a-z][a-z0-9_.\-]*$/),
  system: slug,
  record_id: nonEmptyText(LIMITS.id),
  ticket_id: id,
  status: z.enum(['created', 'updated', 'unchanged']),
  note_hash: sha256.optional(),
  written_at: isoTime,
});
export type ReceiptV1 = z.infer<typeof ReceiptV1>;

/** One earlier ticket of the customer, as the CRM holds it. */
export const EarlierTicket = z.looseObject({
  ticket_id: id,
  /** The CRM status the last write left (`triaged`, `needs_human`, …). */
  status: nonEmptyText(LIMITS.name),
  /** The start of the CRM note, whitespace collapsed: what the ticket was about. */
  note_excerpt: text(LIMITS.shortText),
  updated_at: isoTime,
});
export type EarlierTicket = z.infer<typeof EarlierTicket>;

/** `account_history.v1`: the customer's earlier tickets, most recently changed first; never the
 * ticket the job works on. `more`: the CRM holds more than the `count` listed. */
export const AccountHistoryV1 = z.looseObject({
  customer_id: id,
  tickets: list(EarlierTicket),
  count: count.max(LIMITS.listItems),
  more: z.boolean(),
  /** With a chat model configured: one line on what the earlier tickets have in common. */
  pattern: text(LIMITS.shortText).optional(),
});
export type AccountHistoryV1 = z.infer<typeof AccountHistoryV1>;

/** Artifact type name → body schema, for the ticket pipelines' stages to validate bodies by type. */
export const ticketArtifactBodies = {
  'ticket.raw': TicketRaw,
  'intake.v1': IntakeV1,
  'chunks.v1': ChunksV1,
  'no_hit.v1': NoHitV1,
  summary_md: SummaryMd,
  'verdict.v1': VerdictV1,
  'receipt.v1': ReceiptV1,
  'account_history.v1': AccountHistoryV1,
} as const;
export type TicketArtifactType = keyof typeof ticketArtifactBodies;

/** A ticket pipeline's job request as requests carried the ticket before `entry` (`ticketEntry`
 * reads `ticket` as the entry); `entry` may carry the ticket instead. */
export type TicketJobRequest = JobRequest & { ticket: TicketRaw };
