/**
 * The effect ledger's records: every outbound write a writer sends to a system handrail does not
 * own, noted before it is sent (the intent: key, system, request and its hash, when it was sent)
 * and after (the outcome: the system's reference, or its refusal). An intent with no outcome is a
 * write in doubt: it may have happened. Both backends keep the same rows.
 */
import type { WriteReceipt } from '../../../contracts';

/** How a write in doubt was settled (the receipt's `in_doubt.resolution`). */
export type InDoubtResolution = NonNullable<WriteReceipt['in_doubt']>['resolution'];

export interface EffectEntry {
  /** `job_id:stage:artifact_type`, the writer's write key. */
  write_key: string;
  job_id: string;
  system: string;
  /** `sha256:<hex>` of the request as the writer sends it. */
  request_hash: string;
  /** The request itself, as text: the evidence a human reads when the write is in doubt. */
  request: string;
  /** How many times the request was sent (1 when it went out once). */
  sends: number;
  /** When the request was last sent (its intent recorded). */
  sent_at: string;
  /** The outcome: what the system named the write, once it answered (or a reconciliation found it). */
  reference: string | null;
  /** The outcome: the system's refusal (it answered, and wrote nothing). */
  error: string | null;
  outcome_at: string | null;
  /** How the write was settled after being found in doubt, or null. */
  resolution: InDoubtResolution | null;
  /** Who allowed one more send of a write in doubt (a human's "send it"), until it is sent. */
  send_allowed_by: string | null;
  /** The human decision last taken on this write (its id): the same decision again changes nothing. */
  decision_id: string | null;
}

/** What a writer notes before it sends. */
export interface EffectIntent {
  key: string;
  system: string;
  request: string;
}

/** What a system answered: its reference, or its refusal. `resolution` when the write had been in doubt. */
export type EffectOutcome = ({ reference: string } | { error: string }) & { resolution?: InDoubtResolution };

/** A human's decision on a write in doubt: it happened (with the system's reference), or send it.
 * `id` names the decision: taken again (a retried attempt), it changes nothing, so one "send it"
 * allows one send. */
export type InDoubtDecision = ({ happened: string } | { send: true }) & { actor: string; id: string };

/** A write whose intent is recorded and whose outcome is not: it may have happened. */
export const isInDoubt = (entry: Pick<EffectEntry, 'reference' | 'error'>): boolean =>
  entry.reference === null && entry.error === null;

/** The ledger's part of the store. */
export interface EffectLedger {
  /** Notes the intent under its key unless one is there: answers the entry, and whether this call made it. */
  recordIntent(intent: EffectIntent): Promise<{ entry: EffectEntry; fresh: boolean }>;
  /** Notes one more send of a recorded intent (a resend): its outcome and refusal are cleared. */
  recordResend(key: string): Promise<EffectEntry>;
  /** Notes the outcome. A reference, once recorded, is never replaced (the first wins). */
  recordOutcome(key: string, outcome: EffectOutcome): Promise<EffectEntry>;
  /** A human's decision on a write in doubt; refused (TypeError) for a write not in doubt. */
  decideInDoubt(key: string, decision: InDoubtDecision): Promise<EffectEntry>;
  findEffect(key: string): Promise<EffectEntry | null>;
  /** Every effect of one job, oldest first. */
  listEffects(jobId: string): Promise<EffectEntry[]>;
}

/** A row of the `effects` table, as both backends read it. */
export interface EffectRow {
  write_key: string;
  job_id: string;
  system: string;
  request_sha256: string;
  request: string;
  sends: number;
  sent_at: string | Date;
  reference: string | null;
  error: string | null;
  outcome_at: string | Date | null;
  resolution: string | null;
  send_allowed_by: string | null;
  decision_id: string | null;
}

export const EFFECT_COLUMNS =
  'write_key, job_id, system, request_sha256, request, sends, sent_at, reference, error, outcome_at, resolution, send_allowed_by, decision_id';

const iso = (at: string | Date): string => (typeof at === 'string' ? at : at.toISOString());

export function effectOf(row: EffectRow): EffectEntry {
  return {
    write_key: row.write_key,
    job_id: row.job_id,
    system: row.system,
    request_hash: `sha256:${row.request_sha256}`,
    request: row.request,
    sends: Number(row.sends),
    sent_at: iso(row.sent_at),
    reference: row.reference,
    error: row.error,
    outcome_at: row.outcome_at === null ? null : iso(row.outcome_at),
    resolution: row.resolution as InDoubtResolution | null,
    send_allowed_by: row.send_allowed_by,
    decision_id: row.decision_id,
  };
}

export function effectNotFound(key: string): TypeError {
  return new TypeError(`no effect recorded under write key ${key}`);
}

/** A human decides only a write in doubt: one with an outcome is settled already. */
export function refuseSettled(entry: EffectEntry): void {
  if (!isInDoubt(entry))
    throw new TypeError(
      `write ${entry.write_key} is not in doubt: ${entry.reference !== null ? `${entry.system} named it ${entry.reference}` : `${entry.system} refused it`}`,
    );
}
