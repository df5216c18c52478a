/**
 * The store's contract, shared by both backends and their callers: the Store interface, its
 * records, and the pure helpers both backends run (receipts, keys, the corpus-sync plan).
 */
import type { ReceiptV1 } from '../../../contracts';
import type { StageResult } from '../../../contracts/stages';
import { sha256Hex } from './content';

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

export interface Store {
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

  /**
   * Applies a CRM patch at most once per idempotency key (`job_id:stage:artifact_type`): the
   * write row and the CRM change commit together, and every later call with the same key, however
   * concurrent, gets the first receipt back without touching the CRM again.
   */
  patchCrmOnce(idempotencyKey: string, patch: CrmPatch): Promise<ReceiptV1>;
  getCrmTicket(ticketId: string): Promise<CrmTicket | null>;
  /** The customer's CRM tickets, most recently changed first, at most `limit`; `except` (the
   * ticket a job is working on) is left out. */
  listCustomerTickets(customerId: string, limit: number, except?: string): Promise<CustomerTicket[]>;
  /** Receipts of every write made for one job, oldest first. */
  listWrites(jobId: string): Promise<ReceiptV1[]>;

  /** Makes the help-center index hold exactly these chunks (unchanged ones are left alone). */
  syncHelpCenter(chunks: readonly HelpChunk[]): Promise<CorpusSyncReport>;
  /** Chunks matching any of the terms, best first. Terms are single words; others are dropped. */
  searchHelpCenter(terms: readonly string[], limit: number): Promise<HelpHit[]>;

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
  const status = before === null ? 'created' : before.status === patch.status && before.note === patch.note ? 'unchanged' : 'updated';
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

/** `job_id` of a `job_id:stage:artifact_type` key (job ids hold no `:`). */
export function jobIdOfKey(key: string): string {
  const jobId = key.split(':', 1)[0];
  if (!jobId || key.split(':').length !== 3) throw new TypeError(`idempotency key ${JSON.stringify(key)} is not job_id:stage:artifact_type`);
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
