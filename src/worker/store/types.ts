/**
 * The store's contract, shared by both backends and their callers: the Store interface, its
 * records, and the pure helpers both backends run (receipts, keys, the corpus-sync plan).
 */
import type { WriteReceipt } from '../../../contracts';
import type { ReceiptV1 } from '../../../contracts/pipelines/ticket-artifacts';
import {
  EscalationRecordTransitionError,
  decideEscalationRecordTransition,
  type EscalationRecordAuditRow,
  type EscalationRecordBeginInput,
  type EscalationRecordCloseReason,
  type EscalationRecordDecider,
  type EscalationRecordListQuery,
  type EscalationRecord,
  type EscalationRecordRequest,
} from '../../../contracts/escalation-record';
import type { StageResult } from '../../../contracts/stages';
import { sha256Hex } from './content';
import type { EffectLedger } from './effects';

export type StoreBackend = 'sqlite' | 'postgres';

/** One searchable passage of a help-center article; `key` is the citation key drafts cite. */
export interface HelpChunk {
  key: string;
  article_slug: string;
  title: string;
  /** Space-separated keywords from the article's front matter, weighted above body text. */
  tags: string;
  position: number;
  text: string;
}

export interface HelpHit {
  key: string;
  title: string;
  text: string;
  /** Higher is better. bm25 on SQLite, ts_rank on PostgreSQL: comparable within one backend only. */
  score: number;
}

export interface CorpusSyncReport {
  inserted: number;
  updated: number;
  unchanged: number;
  deleted: number;
}

export interface CrmTicket {
  ticket_id: string;
  customer_id: string;
  status: string;
  /** The internal note (the triage summary); never sent to the customer. */
  note: string;
  /** Bumped on every change, so a duplicate write that changed nothing is visible as such. */
  revision: number;
  /** Idempotency key of the write that last changed the record. */
  updated_by: string;
}

export type CrmPatch = Pick<CrmTicket, 'ticket_id' | 'customer_id' | 'status' | 'note'>;

/** A CRM ticket in a customer's history: the record and when it last changed (ISO 8601). */
export interface CustomerTicket extends CrmTicket {
  updated_at: string;
}

/** What a writer needs of the CRM, and what tests and benches read back: the keyed write and its
 * records. Its own database in a split deployment (HANDRAIL_CRM_DATABASE_URL, held by the writer
 * worker only); the store's own tables otherwise. */
export type CrmStore = Pick<Store, 'patchCrmOnce' | 'getCrmTicket' | 'listWrites' | 'findWrite'>;

/** Where a writer's writes go: the keyed write-once and its records. A writer worker may hold
 * another database than the store (its system's own connection). */
export type WritesStore = Pick<Store, 'writeOnce' | 'findWrite' | 'listWrites'>;

/** A write to a declared system, made at most once per key. */
export interface WriteRequest {
  /** `job_id:stage:artifact_type`. */
  key: string;
  /** The system written: the writer card's `writes`. */
  system: string;
  /** What the write touches in that system, as the writer names it. */
  reference: string;
  /** What was written, as text (canonical JSON for a body): the receipt keeps its sha256. */
  payload: string;
}

/** One entry of a job's stream as stored: its place in the job's order, its key, its body. */
export interface StreamEntry {
  seq: number;
  key: string;
  body: string;
}

/** An entry to append: durable when it has no expiry (its key is numbered once), live otherwise. */
export interface NewStreamEntry {
  key: string;
  body: string;
  expiresAt?: Date;
}

/** Each job's followed events in one growing order (src/stream/journal.ts), shared by every API
 * server and worker on the store. */
export interface StreamStore {
  /** Appends the entries whose keys the job's stream does not hold yet, in order, each numbered
   * one past the job's newest; answers the seq each key has (new or as numbered before). */
  appendStreamEntries(jobId: string, entries: readonly NewStreamEntry[]): Promise<Map<string, number>>;
  /** The job's entries after `afterSeq`, oldest first, at most `limit`; expired live ones left out. */
  readStreamEntries(jobId: string, afterSeq: number, limit: number): Promise<StreamEntry[]>;
  /** Removes live entries expired by `now`, except each job's newest; answers how many went. */
  pruneStreamEntries(now: Date): Promise<number>;
}

export interface Store extends EffectLedger, StreamStore {
  readonly backend: StoreBackend;

  /** Stores a JSON body under its sha256 (same content, same address) and returns the hex. */
  putContent(canonicalJson: string): Promise<string>;
  /** The stored text for a sha256 hex, or null when absent. */
  getContent(sha256Hex: string): Promise<string | null>;

  /** Records a stage result under its delivery key; the first record wins and is returned. */
  recordStageCompletion(deliveryKey: string, result: StageResult, delivery?: DeliveryFacts): Promise<StageRecord>;
  findStageCompletion(deliveryKey: string): Promise<StageResult | null>;
  findStageRecord(deliveryKey: string): Promise<StageRecord | null>;
  /** What the stages of job `jobId` recorded when they produced the artifact at `uri`, oldest
   * first: the job-scoped view of the content-addressed artifacts (the same bytes may belong to
   * many jobs, and one job may produce the same bytes twice). */
  findRecordedArtifacts(jobId: string, uri: string): Promise<{ stage: string; result: StageResult }[]>;
  /** Records one completed step of a stage's work under its delivery key (`step` names it, e.g.
   * `model:3`); the first record wins and its content is returned. */
  recordStageStep(deliveryKey: string, step: string, content: string): Promise<string>;
  /** Every step recorded under a delivery key, by name. A delivery's steps are removed when its
   * completion is recorded (a retry is answered from the completion, never from its steps). */
  findStageSteps(deliveryKey: string): Promise<Map<string, string>>;
  /** Removes the steps recorded before `recordedBefore` of deliveries that never completed (a
   * stage that failed for good, a job cancelled mid-loop); answers how many rows went. Keys under
   * WAITING_STEPS_PREFIX are spared: they are no delivery's steps. */
  pruneStageSteps(recordedBefore: Date): Promise<number>;

  /**
   * Records a write to `write.system` at most once per key (`job_id:stage:artifact_type`): the
   * first call stores it (system, reference, payload hash) and answers `created`; every later call
   * with the key, however concurrent, answers the first write's receipt as `existing`.
   */
  writeOnce(write: WriteRequest): Promise<WriteReceipt>;
  /** The receipt of the write under `key` (status `created`, as recorded), or null. */
  findWrite(key: string): Promise<WriteReceipt | null>;
  /** Receipts of every write made for one job, whatever the system, oldest first. */
  listWrites(jobId: string): Promise<WriteReceipt[]>;

  /**
   * The built-in pipelines' CRM: applies a patch at most once per write key. The write row
   * (system `crm`) and the CRM change commit together, and every later call with the same key,
   * however concurrent, gets the first receipt back without touching the CRM again.
   */
  patchCrmOnce(idempotencyKey: string, patch: CrmPatch): Promise<ReceiptV1>;
  getCrmTicket(ticketId: string): Promise<CrmTicket | null>;
  /** The customer's CRM tickets, most recently changed first, at most `limit`; `except` (the
   * ticket a job is working on) is left out. */
  listCustomerTickets(customerId: string, limit: number, except?: string): Promise<CustomerTicket[]>;

  /** Makes the help-center index hold exactly these chunks (unchanged ones are left alone). */
  syncHelpCenter(chunks: readonly HelpChunk[]): Promise<CorpusSyncReport>;
  /** Chunks matching any of the terms, best first. Terms are single words; others are dropped. */
  searchHelpCenter(terms: readonly string[], limit: number): Promise<HelpHit[]>;

  /**
   * Durable escalation records. Every write takes an idempotency key: the same key again
   * returns the record as that first write left it and appends nothing. A refusal throws a
   * EscalationRecordTransitionError (`not_found`, `conflict`, `illegal_transition`, `key_reused`) and
   * changes nothing. The record id is made from the begin key (`escalationRecordId`).
   */
  beginEscalationRecord(input: EscalationRecordBeginInput, key: string): Promise<EscalationRecord>;
  acceptEscalationRecord(id: string, actor: string, key: string): Promise<EscalationRecord>;
  cancelEscalationRecord(id: string, actor: string, key: string): Promise<EscalationRecord>;
  /** The rail closes a record when its job is cancelled, decided or times out. With `decidedBy`
   * (a decision taken through the record) only while the record is open, or accepted by the
   * decider, who then holds it: else `conflict` or `illegal_transition`, as a cancel or an accept
   * committed first. */
  closeEscalationRecord(
    id: string,
    reason: EscalationRecordCloseReason,
    key: string,
    decidedBy?: EscalationRecordDecider,
  ): Promise<EscalationRecord>;
  getEscalationRecord(id: string): Promise<EscalationRecord | null>;
  /** A project's records in one state (`open` by default), newest first, at most `limit` (50). */
  listEscalationRecords(query: EscalationRecordListQuery): Promise<EscalationRecord[]>;
  /** A record's audit trail, oldest first (empty for an unknown id). */
  escalationRecordAudit(id: string): Promise<EscalationRecordAuditRow[]>;

  /** Highest migration applied. */
  schemaVersion(): Promise<number>;
  close(): Promise<void>;
}

/** The delivery a stage result answered, recorded with it. */
export interface DeliveryFacts {
  job_id: string;
  stage: string;
  /** sha256 of the delivery: the package exactly as delivered (the rail's hop and ack included)
   * and the activity that received it; a retry of the same activity has the same one. */
  delivery_sha: string;
  /** sha256 of the package less the rail's ack: a repeated delivery of one package has the same one. */
  package_sha: string;
}

export interface StageRecord {
  result: StageResult;
  /** Null for results recorded before deliveries were (schema version 3). */
  delivery_sha: string | null;
  package_sha: string | null;
}

/** Single words only: they are the one input both FTS5 and tsquery read without any syntax. */
export function searchableTerms(terms: readonly string[]): string[] {
  return [...new Set(terms.filter((t) => /^[\p{L}\p{N}]+$/u.test(t)).map((t) => t.toLowerCase()))];
}

/** The receipt a fresh CRM write produces; both backends build it the same way. */
export function crmReceipt(
  idempotencyKey: string,
  patch: CrmPatch,
  before: Pick<CrmTicket, 'status' | 'note'> | null,
  noteHash: string,
  writtenAt: Date,
): ReceiptV1 {
  const status =
    before === null
      ? 'created'
      : before.status === patch.status && before.note === patch.note
        ? 'unchanged'
        : 'updated';
  return {
    idempotency_key: idempotencyKey,
    system: 'crm',
    record_id: `crm_tickets/${patch.ticket_id}`,
    ticket_id: patch.ticket_id,
    status,
    note_hash: `sha256:${noteHash}`,
    written_at: writtenAt.toISOString(),
  };
}

/** A row of the `writes` table, as both backends read it. */
export interface WriteRow {
  idempotency_key: string;
  system: string | null;
  reference: string | null;
  payload_sha256: string | null;
  written_at: string | Date;
}

/** The receipt a write row stands for; `status` says whether this call made it. */
export function writeReceiptOf(row: WriteRow, status: WriteReceipt['status']): WriteReceipt {
  return {
    write_key: row.idempotency_key,
    // Rows from before the columns were kept all came from the CRM writer (migration 6 fills them).
    system: row.system ?? 'crm',
    reference: row.reference ?? row.idempotency_key,
    ...(row.payload_sha256 ? { payload_hash: `sha256:${row.payload_sha256}` } : {}),
    status,
    written_at: typeof row.written_at === 'string' ? row.written_at : row.written_at.toISOString(),
  };
}

/** `job_id` of a `job_id:stage:artifact_type` key (job ids hold no `:`). */
export function jobIdOfKey(key: string): string {
  const jobId = key.split(':', 1)[0];
  if (!jobId || key.split(':').length !== 3)
    throw new TypeError(`idempotency key ${JSON.stringify(key)} is not job_id:stage:artifact_type`);
  return jobId;
}

/** Change detection for the corpus sync: every field that reaches the index or the citation. */
export function chunkSha(chunk: HelpChunk): string {
  return sha256Hex(JSON.stringify([chunk.article_slug, chunk.title, chunk.tags, chunk.position, chunk.text]));
}

/** What syncing the corpus must do, given the stored `chunk_key → content sha` map: the chunks
 * to upsert (new or changed, with their sha), the stored keys to delete, and the counts. Both
 * backends run it inside their own transaction and only execute the SQL. */
export function planCorpusSync(
  stored: ReadonlyMap<string, string>,
  chunks: readonly HelpChunk[],
): { upserts: (HelpChunk & { sha: string })[]; stale: string[]; report: CorpusSyncReport } {
  const report: CorpusSyncReport = { inserted: 0, updated: 0, unchanged: 0, deleted: 0 };
  const upserts: (HelpChunk & { sha: string })[] = [];
  const remaining = new Map(stored);
  for (const chunk of chunks) {
    const sha = chunkSha(chunk);
    const prior = remaining.get(chunk.key);
    remaining.delete(chunk.key);
    if (prior === sha) report.unchanged++;
    else {
      upserts.push({ ...chunk, sha });
      if (prior === undefined) report.inserted++;
      else report.updated++;
    }
  }
  const stale = [...remaining.keys()];
  report.deleted = stale.length;
  return { upserts, stale, report };
}

/** A escalation record's id, made from its begin key: a retried begin on any connection names the
 * same record, so the primary key itself keeps a begin from doubling. */
export function escalationRecordId(beginKey: string): string {
  return `hr_${sha256Hex(`handoff_records:${beginKey}`).slice(0, 32)}`;
}

/** The record a begin creates (state `open`, no transitions yet). */
export function newEscalationRecord(input: EscalationRecordBeginInput, key: string, at: Date): EscalationRecord {
  return {
    id: escalationRecordId(key),
    workspace: input.workspace,
    project: input.project,
    job_id: input.job_id,
    summary: input.summary,
    open_questions: [...input.open_questions],
    next_steps: [...input.next_steps],
    owner: input.owner ?? null,
    state: 'open',
    created_by: input.created_by,
    created_at: at.toISOString(),
    accepted_by: null,
    accepted_at: null,
    cancelled_by: null,
    cancelled_at: null,
    closed_at: null,
    close_reason: null,
  };
}

/** The record after one transition the lifecycle allows (decideEscalationRecordTransition said so). */
function applied(
  record: EscalationRecord,
  row: Pick<EscalationRecordAuditRow, 'transition' | 'actor' | 'at' | 'detail'>,
): EscalationRecord {
  switch (row.transition) {
    case 'begin':
      return { ...record, state: 'open', created_by: row.actor ?? record.created_by, created_at: row.at };
    case 'accept':
      return { ...record, state: 'accepted', accepted_by: row.actor, accepted_at: row.at };
    case 'cancel':
      return { ...record, state: 'cancelled', cancelled_by: row.actor, cancelled_at: row.at };
    case 'close':
      // A close on a decision names the decider, who holds the record from then on if nobody did.
      return {
        ...record,
        state: 'closed',
        closed_at: row.at,
        close_reason: row.detail.close_reason ?? null,
        ...(row.actor !== null && record.accepted_by === null ? { accepted_by: row.actor, accepted_at: row.at } : {}),
      };
  }
}

/**
 * What a keyed transition does to `record`: `{ next, audit }` for a change, `{ next: record }`
 * when nothing changes (accepting again by the same actor), or a thrown EscalationRecordTransitionError.
 * Both backends run it on the row they hold locked and then only write what it returns.
 */
export function planEscalationRecordTransition(
  record: EscalationRecord,
  request: EscalationRecordRequest,
  key: string,
  lastSeq: number,
  at: Date,
): { next: EscalationRecord; audit?: EscalationRecordAuditRow } {
  const decision = decideEscalationRecordTransition(record, request);
  if (!decision.ok) throw new EscalationRecordTransitionError(decision.code, decision.message);
  if (decision.change === 'none') return { next: record };
  const audit: EscalationRecordAuditRow = {
    record_id: record.id,
    seq: lastSeq + 1,
    transition: request.transition,
    actor: request.transition === 'close' ? (request.decided_by?.actor ?? null) : request.actor,
    at: at.toISOString(),
    idempotency_key: key,
    detail: { from: record.state, to: decision.to, ...(request.transition === 'close' ? closeDetail(request) : {}) },
  };
  return { next: applied(record, audit), audit };
}

function closeDetail(
  request: Extract<EscalationRecordRequest, { transition: 'close' }>,
): Pick<EscalationRecordAuditRow['detail'], 'close_reason' | 'action'> {
  return { close_reason: request.reason, ...(request.decided_by ? { action: request.decided_by.action } : {}) };
}

/** The record as it stood right after audit row `seq`: what a repeated key returns. The audit
 * trail holds every change, so replaying its first `seq` rows over the record's fixed fields
 * rebuilds that outcome exactly. */
export function escalationRecordAt(
  current: EscalationRecord,
  audit: readonly EscalationRecordAuditRow[],
  seq: number,
): EscalationRecord {
  let record: EscalationRecord = {
    ...current,
    accepted_by: null,
    accepted_at: null,
    cancelled_by: null,
    cancelled_at: null,
    closed_at: null,
    close_reason: null,
  };
  for (const row of audit) if (row.seq <= seq) record = applied(record, row);
  return record;
}

/** What a repeated key returns, or the refusal when the key was spent on another write. */
export function replayEscalationRecordKey(
  prior: Pick<EscalationRecordAuditRow, 'record_id' | 'transition' | 'seq'>,
  recordId: string,
  transition: EscalationRecordAuditRow['transition'],
  key: string,
): number {
  if (prior.record_id !== recordId || prior.transition !== transition) {
    throw new EscalationRecordTransitionError(
      'key_reused',
      `idempotency key ${JSON.stringify(key)} was already used to ${prior.transition} handoff record ${prior.record_id}`,
    );
  }
  return prior.seq;
}

export function escalationRecordNotFound(id: string): EscalationRecordTransitionError {
  return new EscalationRecordTransitionError('not_found', `no handoff record ${id}`);
}

/** The conditional UPDATE found the record no longer in the state the decision was made on. */
export function escalationRecordRaced(id: string, request: EscalationRecordRequest): EscalationRecordTransitionError {
  return new EscalationRecordTransitionError(
    'conflict',
    `handoff record ${id} changed while a ${request.transition} was being applied; nothing was changed`,
  );
}

/** Stage steps kept under a job's stage rather than a delivery, for as long as the job waits for a
 * human (a remote task that asked for input): a decision may come after any retention, so pruning
 * never takes them. */
export const WAITING_STEPS_PREFIX = 'waiting:';
