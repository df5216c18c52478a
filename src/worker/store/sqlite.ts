/** Embedded store on SQLite (better-sqlite3): the default when no DATABASE_URL is configured. */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import type { WriteReceipt } from '../../../contracts';
import type { ReceiptV1 } from '../../../contracts/pipelines/ticket-artifacts';
import type { StageResult } from '../../../contracts/stages';
import {
  ESCALATION_RECORD_LIST_DEFAULT,
  EscalationRecordBeginInput,
  EscalationRecordIdempotencyKey,
  EscalationRecordListQuery,
  type EscalationRecordAuditRow,
  type EscalationRecordCloseReason,
  type EscalationRecordDecider,
  type EscalationRecord,
  type EscalationRecordRequest,
} from '../../../contracts/escalation-record';
import { sha256Hex } from './content';
import {
  crmReceipt,
  escalationRecordNotFound,
  escalationRecordRaced,
  escalationRecordAt,
  escalationRecordId,
  jobIdOfKey,
  newEscalationRecord,
  planEscalationRecordTransition,
  replayEscalationRecordKey,
  planCorpusSync,
  searchableTerms,
  type CorpusSyncReport,
  type CrmPatch,
  type CrmTicket,
  type CustomerTicket,
  type DeliveryFacts,
  type StageRecord,
  type HelpChunk,
  type HelpHit,
  type NewStreamEntry,
  type Store,
  type StreamEntry,
  type WriteRequest,
  type WriteRow,
  writeReceiptOf,
  WAITING_STEPS_PREFIX,
} from './types';
import { MIGRATIONS } from './migrations';
import {
  EFFECT_COLUMNS,
  effectNotFound,
  effectOf,
  refuseSettled,
  type EffectEntry,
  type EffectIntent,
  type EffectOutcome,
  type EffectRow,
  type InDoubtDecision,
} from './effects';

const WRITE_COLUMNS = 'idempotency_key, system, reference, payload_sha256, written_at';
const WRITE_INSERT =
  'INSERT INTO writes (idempotency_key, job_id, receipt, written_at, system, reference, payload_sha256) VALUES (?, ?, ?, ?, ?, ?, ?)';

/** bm25 column weights for (title, tags, text): a title match outranks a passing mention. */
const BM25_WEIGHTS = '4.0, 2.0, 1.0';

export function openSqliteStore(file: string): Store {
  if (file === ':memory:') return new SqliteStore(prepare(new Database(file)));
  const resolved = path.resolve(file);
  try {
    makeDirectory(path.dirname(resolved));
    const db = new Database(resolved);
    try {
      return new SqliteStore(prepare(db));
    } catch (error) {
      db.close();
      throw error;
    }
  } catch (error) {
    const code = (error as { code?: string }).code;
    const hint =
      code === 'SQLITE_READONLY' || code === 'SQLITE_CANTOPEN'
        ? ' (this user must be able to write the file and its directory)'
        : '';
    throw new Error(`cannot open the SQLite store ${resolved}: ${(error as Error).message}${hint}`, { cause: error });
  }
}

/** mkdir -p without Node's `recursive`, which loops forever (at full CPU, deaf to signals) where
 * mkdir fails with ENOENT under an existing parent, as it does in /proc. */
function makeDirectory(dir: string): void {
  if (fs.existsSync(dir)) return;
  makeDirectory(path.dirname(dir));
  try {
    fs.mkdirSync(dir);
  } catch (error) {
    // Another process opening the same store may have just made it.
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
}

function prepare(db: Database.Database): Database.Database {
  // WAL lets readers run beside the writer; busy_timeout makes a second connection (another
  // worker process on the same file) wait for the write lock instead of failing at once.
  db.pragma('journal_mode = WAL');
  db.pragma('busy_timeout = 5000');
  db.pragma('foreign_keys = ON');
  migrate(db);
  return db;
}

function migrate(db: Database.Database): void {
  db.exec(
    'CREATE TABLE IF NOT EXISTS handrail_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)',
  );
  // IMMEDIATE takes the write lock first, so two processes opening a fresh file migrate once.
  db.transaction(() => {
    const applied = new Set(db.prepare('SELECT version FROM handrail_migrations').pluck().all() as number[]);
    for (const migration of MIGRATIONS) {
      if (applied.has(migration.version)) continue;
      db.exec(migration.sqlite);
      db.prepare('INSERT INTO handrail_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(
        migration.version,
        migration.name,
        new Date().toISOString(),
      );
    }
    // SQLite opens a file it may not write read-only without a word, and BEGIN IMMEDIATE still
    // succeeds: this no-op write fails now (SQLITE_READONLY) rather than on every job's first write.
    db.prepare('DELETE FROM handrail_migrations WHERE 0').run();
  }).immediate();
}

class SqliteStore implements Store {
  readonly backend = 'sqlite' as const;

  /** Every statement prepared once per connection: preparing compiles the SQL, and a hop runs
   * several (better-sqlite3 `prepare` was 2–3 % of a worker's main thread in the bench). A text is
   * always run in one mode (`pluck` or not), which a cached statement keeps. */
  private readonly statements = new Map<string, Database.Statement>();
  /** Lists served again while nothing wrote a record (an API polled by dashboards, bench/api):
   * SQLite's `data_version` moves when another connection commits, `escalationRecordWrites` when this one
   * writes a record. */
  private listings = { version: '', entries: new Map<string, readonly EscalationRecord[]>() };
  private escalationRecordWrites = 0;

  constructor(private readonly db: Database.Database) {}

  private sql(text: string): Database.Statement {
    let statement = this.statements.get(text);
    if (!statement) this.statements.set(text, (statement = this.db.prepare(text)));
    return statement;
  }

  async putContent(content: string): Promise<string> {
    const hex = sha256Hex(content);
    this.sql(
      'INSERT INTO artifacts (sha256, content, created_at) VALUES (?, ?, ?) ON CONFLICT (sha256) DO NOTHING',
    ).run(hex, content, new Date().toISOString());
    return hex;
  }

  async getContent(hex: string): Promise<string | null> {
    const row = this.sql('SELECT content FROM artifacts WHERE sha256 = ?').pluck().get(hex) as string | undefined;
    return row ?? null;
  }

  async recordStageCompletion(
    deliveryKey: string,
    result: StageResult,
    delivery?: DeliveryFacts,
  ): Promise<StageRecord> {
    return this.db
      .transaction(() => {
        this.sql(
          `INSERT INTO stage_completions (delivery_key, result, recorded_at, job_id, stage, artifact_uri, delivery_sha, package_sha)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (delivery_key) DO NOTHING`,
        ).run(
          deliveryKey,
          JSON.stringify(result),
          new Date().toISOString(),
          delivery?.job_id ?? null,
          delivery?.stage ?? null,
          result.artifact.uri,
          delivery?.delivery_sha ?? null,
          delivery?.package_sha ?? null,
        );
        // The completion answers every later attempt: the steps that led to it are done with.
        this.sql('DELETE FROM stage_steps WHERE delivery_key = ?').run(deliveryKey);
        return this.record(deliveryKey)!;
      })
      .immediate();
  }

  async findStageCompletion(deliveryKey: string): Promise<StageResult | null> {
    return this.record(deliveryKey)?.result ?? null;
  }

  async findStageRecord(deliveryKey: string): Promise<StageRecord | null> {
    return this.record(deliveryKey);
  }

  async findRecordedArtifacts(jobId: string, uri: string): Promise<{ stage: string; result: StageResult }[]> {
    const rows = this.sql(
      'SELECT stage, result FROM stage_completions WHERE job_id = ? AND artifact_uri = ? ORDER BY recorded_at',
    ).all(jobId, uri) as {
      stage: string;
      result: string;
    }[];
    return rows.map((row) => ({ stage: row.stage, result: JSON.parse(row.result) as StageResult }));
  }

  async recordStageStep(deliveryKey: string, step: string, content: string): Promise<string> {
    this.sql(
      'INSERT INTO stage_steps (delivery_key, step, content, recorded_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING',
    ).run(deliveryKey, step, content, new Date().toISOString());
    return this.sql('SELECT content FROM stage_steps WHERE delivery_key = ? AND step = ?')
      .pluck()
      .get(deliveryKey, step) as string;
  }

  async findStageSteps(deliveryKey: string): Promise<Map<string, string>> {
    const rows = this.sql('SELECT step, content FROM stage_steps WHERE delivery_key = ?').all(deliveryKey) as {
      step: string;
      content: string;
    }[];
    return new Map(rows.map((row) => [row.step, row.content]));
  }

  async pruneStageSteps(recordedBefore: Date): Promise<number> {
    return this.sql('DELETE FROM stage_steps WHERE recorded_at < ? AND substr(delivery_key, 1, ?) <> ?').run(
      recordedBefore.toISOString(),
      WAITING_STEPS_PREFIX.length,
      WAITING_STEPS_PREFIX,
    ).changes;
  }

  async appendStreamEntries(jobId: string, entries: readonly NewStreamEntry[]): Promise<Map<string, number>> {
    const insert = this.sql(
      `INSERT INTO job_stream (job_id, seq, key, body, expires_at)
       SELECT ?, coalesce(max(seq), 0) + 1, ?, ?, ? FROM job_stream WHERE job_id = ?
       ON CONFLICT DO NOTHING`,
    );
    const seqOf = this.sql('SELECT seq FROM job_stream WHERE job_id = ? AND key = ?').pluck();
    // One transaction: SQLite serializes writers, so max + 1 is never taken twice.
    return this.db.transaction(() => {
      const seqs = new Map<string, number>();
      for (const e of entries) {
        insert.run(jobId, e.key, e.body, e.expiresAt?.toISOString() ?? null, jobId);
        seqs.set(e.key, seqOf.get(jobId, e.key) as number);
      }
      return seqs;
    })();
  }

  async readStreamEntries(jobId: string, afterSeq: number, limit: number): Promise<StreamEntry[]> {
    return this.sql(
      `SELECT seq, key, body FROM job_stream WHERE job_id = ? AND seq > ? AND (expires_at IS NULL OR expires_at > ?)
       ORDER BY seq LIMIT ?`,
    ).all(jobId, afterSeq, new Date().toISOString(), limit) as StreamEntry[];
  }

  async pruneStreamEntries(now: Date): Promise<number> {
    return this.sql(
      `DELETE FROM job_stream WHERE expires_at <= ?
       AND seq < (SELECT max(seq) FROM job_stream newest WHERE newest.job_id = job_stream.job_id)`,
    ).run(now.toISOString()).changes;
  }

  private record(deliveryKey: string): StageRecord | null {
    const row = this.sql('SELECT result, delivery_sha, package_sha FROM stage_completions WHERE delivery_key = ?').get(
      deliveryKey,
    ) as { result: string; delivery_sha: string | null; package_sha: string | null } | undefined;
    return row === undefined
      ? null
      : { result: JSON.parse(row.result) as StageResult, delivery_sha: row.delivery_sha, package_sha: row.package_sha };
  }

  async patchCrmOnce(idempotencyKey: string, patch: CrmPatch): Promise<ReceiptV1> {
    const jobId = jobIdOfKey(idempotencyKey);
    return this.db
      .transaction((): ReceiptV1 => {
        const prior = this.sql('SELECT receipt FROM writes WHERE idempotency_key = ?').pluck().get(idempotencyKey) as
          string | undefined;
        if (prior !== undefined) return JSON.parse(prior) as ReceiptV1;

        const before = this.sql('SELECT status, note, revision FROM crm_tickets WHERE ticket_id = ?').get(
          patch.ticket_id,
        ) as { status: string; note: string; revision: number } | undefined;
        const now = new Date();
        const receipt = crmReceipt(idempotencyKey, patch, before ?? null, sha256Hex(patch.note), now);
        if (receipt.status !== 'unchanged') {
          this.sql(
            `INSERT INTO crm_tickets (ticket_id, customer_id, status, note, revision, updated_by, updated_at)
           VALUES (@ticket_id, @customer_id, @status, @note, 1, @key, @at)
           ON CONFLICT (ticket_id) DO UPDATE SET customer_id = excluded.customer_id, status = excluded.status,
             note = excluded.note, revision = crm_tickets.revision + 1, updated_by = excluded.updated_by,
             updated_at = excluded.updated_at`,
          ).run({ ...patch, key: idempotencyKey, at: now.toISOString() });
        }
        this.sql(WRITE_INSERT).run(
          idempotencyKey,
          jobId,
          JSON.stringify(receipt),
          now.toISOString(),
          receipt.system,
          receipt.record_id,
          sha256Hex(patch.note),
        );
        return receipt;
      })
      .immediate();
  }

  async writeOnce(write: WriteRequest): Promise<WriteReceipt> {
    const jobId = jobIdOfKey(write.key);
    return this.db
      .transaction((): WriteReceipt => {
        const prior = this.writeRow(write.key);
        if (prior) return writeReceiptOf(prior, 'existing');
        const row: WriteRow = {
          idempotency_key: write.key,
          system: write.system,
          reference: write.reference,
          payload_sha256: sha256Hex(write.payload),
          written_at: new Date().toISOString(),
        };
        const receipt = writeReceiptOf(row, 'created');
        this.sql(WRITE_INSERT).run(
          write.key,
          jobId,
          JSON.stringify(receipt),
          row.written_at,
          row.system,
          row.reference,
          row.payload_sha256,
        );
        return receipt;
      })
      .immediate();
  }

  async recordIntent(intent: EffectIntent): Promise<{ entry: EffectEntry; fresh: boolean }> {
    const jobId = jobIdOfKey(intent.key);
    const inserted = this.sql(
      `INSERT INTO effects (write_key, job_id, system, request_sha256, request, sends, sent_at)
       VALUES (?, ?, ?, ?, ?, 1, ?) ON CONFLICT (write_key) DO NOTHING`,
    ).run(intent.key, jobId, intent.system, sha256Hex(intent.request), intent.request, new Date().toISOString());
    return { entry: this.effect(intent.key), fresh: inserted.changes === 1 };
  }

  async recordResend(key: string): Promise<EffectEntry> {
    this.sql(
      `UPDATE effects SET sends = sends + 1, sent_at = ?, error = NULL, outcome_at = NULL, send_allowed_by = NULL
       WHERE write_key = ? AND reference IS NULL`,
    ).run(new Date().toISOString(), key);
    return this.effect(key);
  }

  async recordOutcome(key: string, outcome: EffectOutcome): Promise<EffectEntry> {
    this.sql(
      `UPDATE effects SET reference = ?, error = ?, outcome_at = ?, resolution = coalesce(?, resolution)
       WHERE write_key = ? AND reference IS NULL`,
    ).run(
      'reference' in outcome ? outcome.reference : null,
      'error' in outcome ? outcome.error : null,
      new Date().toISOString(),
      outcome.resolution ?? null,
      key,
    );
    return this.effect(key);
  }

  async decideInDoubt(key: string, decision: InDoubtDecision): Promise<EffectEntry> {
    return this.db
      .transaction((): EffectEntry => {
        const entry = this.effect(key);
        if (entry.decision_id === decision.id) return entry;
        refuseSettled(entry);
        if ('happened' in decision)
          this.sql(
            `UPDATE effects SET reference = ?, outcome_at = ?, resolution = 'human_happened', decision_id = ? WHERE write_key = ?`,
          ).run(decision.happened, new Date().toISOString(), decision.id, key);
        else
          this.sql('UPDATE effects SET send_allowed_by = ?, decision_id = ? WHERE write_key = ?').run(
            decision.actor,
            decision.id,
            key,
          );
        return this.effect(key);
      })
      .immediate();
  }

  async findEffect(key: string): Promise<EffectEntry | null> {
    const row = this.effectRow(key);
    return row ? effectOf(row) : null;
  }

  async listEffects(jobId: string): Promise<EffectEntry[]> {
    const rows = this.sql(`SELECT ${EFFECT_COLUMNS} FROM effects WHERE job_id = ? ORDER BY sent_at, write_key`).all(
      jobId,
    ) as EffectRow[];
    return rows.map(effectOf);
  }

  /** The entry under a key (synchronous, so it reads inside a transaction); throws when absent. */
  private effect(key: string): EffectEntry {
    const row = this.effectRow(key);
    if (!row) throw effectNotFound(key);
    return effectOf(row);
  }

  private effectRow(key: string): EffectRow | undefined {
    return this.sql(`SELECT ${EFFECT_COLUMNS} FROM effects WHERE write_key = ?`).get(key) as EffectRow | undefined;
  }

  async findWrite(key: string): Promise<WriteReceipt | null> {
    const row = this.writeRow(key);
    return row ? writeReceiptOf(row, 'created') : null;
  }

  private writeRow(key: string): WriteRow | undefined {
    return this.sql(`SELECT ${WRITE_COLUMNS} FROM writes WHERE idempotency_key = ?`).get(key) as WriteRow | undefined;
  }

  async getCrmTicket(ticketId: string): Promise<CrmTicket | null> {
    const row = this.sql(
      'SELECT ticket_id, customer_id, status, note, revision, updated_by FROM crm_tickets WHERE ticket_id = ?',
    ).get(ticketId) as CrmTicket | undefined;
    return row ?? null;
  }

  async listCustomerTickets(customerId: string, limit: number, except?: string): Promise<CustomerTicket[]> {
    return this.sql(
      `SELECT ticket_id, customer_id, status, note, revision, updated_by, updated_at FROM crm_tickets
       WHERE customer_id = ? AND ticket_id IS NOT ? ORDER BY updated_at DESC, ticket_id LIMIT ?`,
    ).all(customerId, except ?? null, limit) as CustomerTicket[];
  }

  async listWrites(jobId: string): Promise<WriteReceipt[]> {
    const rows = this.sql(
      `SELECT ${WRITE_COLUMNS} FROM writes WHERE job_id = ? ORDER BY written_at, idempotency_key`,
    ).all(jobId) as WriteRow[];
    return rows.map((row) => writeReceiptOf(row, 'created'));
  }

  async syncHelpCenter(chunks: readonly HelpChunk[]): Promise<CorpusSyncReport> {
    return this.db
      .transaction((): CorpusSyncReport => {
        const stored = new Map(
          (
            this.sql('SELECT chunk_key, content_sha256 FROM help_chunks').all() as {
              chunk_key: string;
              content_sha256: string;
            }[]
          ).map((r) => [r.chunk_key, r.content_sha256]),
        );
        const upsert = this.sql(
          `INSERT INTO help_chunks (chunk_key, article_slug, title, tags, position, text, content_sha256)
         VALUES (@key, @article_slug, @title, @tags, @position, @text, @sha)
         ON CONFLICT (chunk_key) DO UPDATE SET article_slug = excluded.article_slug, title = excluded.title,
           tags = excluded.tags, position = excluded.position, text = excluded.text, content_sha256 = excluded.content_sha256`,
        );
        const { upserts, stale, report } = planCorpusSync(stored, chunks);
        for (const chunk of upserts) upsert.run(chunk);
        const remove = this.sql('DELETE FROM help_chunks WHERE chunk_key = ?');
        for (const staleKey of stale) remove.run(staleKey);
        return report;
      })
      .immediate();
  }

  async searchHelpCenter(terms: readonly string[], limit: number): Promise<HelpHit[]> {
    const words = searchableTerms(terms);
    if (words.length === 0) return [];
    // Each word quoted: FTS5 reads it as a plain token, never as query syntax (NEAR, column filters).
    const match = words.map((w) => `"${w}"`).join(' OR ');
    const rows = this.sql(
      `SELECT c.chunk_key AS key, c.title, c.text, -bm25(help_chunks_fts, ${BM25_WEIGHTS}) AS score
       FROM help_chunks_fts JOIN help_chunks c ON c.id = help_chunks_fts.rowid
       WHERE help_chunks_fts MATCH ?
       ORDER BY score DESC, c.chunk_key
       LIMIT ?`,
    ).all(match, limit) as HelpHit[];
    return rows;
  }

  async beginEscalationRecord(input: EscalationRecordBeginInput, key: string): Promise<EscalationRecord> {
    const parsed = EscalationRecordBeginInput.parse(input);
    EscalationRecordIdempotencyKey.parse(key);
    this.escalationRecordWrites++;
    return this.db
      .transaction((): EscalationRecord => {
        const id = escalationRecordId(key);
        const replay = this.replay(id, 'begin', key);
        if (replay) return replay;
        const at = new Date();
        const record = newEscalationRecord(parsed, key, at);
        this.sql(
          `INSERT INTO handoff_records (id, created_order, workspace, project, job_id, summary, open_questions, next_steps, owner, state,
           created_by, created_at)
         VALUES (@id, (SELECT coalesce(max(created_order), 0) + 1 FROM handoff_records), @workspace, @project, @job_id, @summary,
           @open_questions, @next_steps, @owner, @state, @created_by, @created_at)`,
        ).run({
          ...record,
          open_questions: JSON.stringify(record.open_questions),
          next_steps: JSON.stringify(record.next_steps),
        });
        this.insertAudit({
          record_id: id,
          seq: 1,
          transition: 'begin',
          actor: record.created_by,
          at: record.created_at,
          idempotency_key: key,
          detail: { from: null, to: 'open' },
        });
        return record;
      })
      .immediate();
  }

  async acceptEscalationRecord(id: string, actor: string, key: string): Promise<EscalationRecord> {
    return this.transition(id, { transition: 'accept', actor }, key);
  }

  async cancelEscalationRecord(id: string, actor: string, key: string): Promise<EscalationRecord> {
    return this.transition(id, { transition: 'cancel', actor }, key);
  }

  async closeEscalationRecord(
    id: string,
    reason: EscalationRecordCloseReason,
    key: string,
    decidedBy?: EscalationRecordDecider,
  ): Promise<EscalationRecord> {
    return this.transition(id, { transition: 'close', reason, ...(decidedBy ? { decided_by: decidedBy } : {}) }, key);
  }

  async getEscalationRecord(id: string): Promise<EscalationRecord | null> {
    return this.readEscalationRecord(id);
  }

  async listEscalationRecords(query: EscalationRecordListQuery): Promise<EscalationRecord[]> {
    const q = EscalationRecordListQuery.parse(query);
    const version = `${String(this.sql('PRAGMA data_version').pluck().get())}:${this.escalationRecordWrites}`;
    if (this.listings.version !== version) this.listings = { version, entries: new Map() };
    const key = JSON.stringify([
      q.workspace,
      q.project,
      q.state ?? 'open',
      q.limit ?? ESCALATION_RECORD_LIST_DEFAULT,
      q.visible_to ?? null,
    ]);
    const listed = this.listings.entries.get(key);
    if (listed) return [...listed];
    const rows = this.sql(
      `SELECT ${HANDOFF_COLUMNS} FROM handoff_records WHERE workspace = @workspace AND project = @project AND state = @state
       AND (@visible_to IS NULL OR owner IS NULL OR owner = @visible_to) ORDER BY created_order DESC LIMIT @limit`,
    ).all({
      workspace: q.workspace,
      project: q.project,
      state: q.state ?? 'open',
      limit: q.limit ?? ESCALATION_RECORD_LIST_DEFAULT,
      visible_to: q.visible_to ?? null,
    }) as EscalationRecordRow[];
    // Frozen: a caller changing a listed record must not change what the next caller is served.
    const records = rows.map((row) => Object.freeze(escalationRecordFromRow(row)));
    if (this.listings.entries.size < MAX_LISTINGS) this.listings.entries.set(key, records);
    return [...records];
  }

  async escalationRecordAudit(id: string): Promise<EscalationRecordAuditRow[]> {
    const rows = this.sql('SELECT * FROM handoff_audit WHERE record_id = ? ORDER BY seq').all(id) as AuditRow[];
    return rows.map(auditFromRow);
  }

  private async transition(id: string, request: EscalationRecordRequest, key: string): Promise<EscalationRecord> {
    EscalationRecordIdempotencyKey.parse(key);
    this.escalationRecordWrites++;
    // One writer at a time (IMMEDIATE takes the write lock first): the read, the decision and the
    // conditional UPDATE see no interleaving, on this connection or another process's.
    return this.db
      .transaction((): EscalationRecord => {
        const replay = this.replay(id, request.transition, key);
        if (replay) return replay;
        const record = this.readEscalationRecord(id);
        if (!record) throw escalationRecordNotFound(id);
        const lastSeq = this.sql('SELECT max(seq) FROM handoff_audit WHERE record_id = ?').pluck().get(id) as number;
        const { next, audit } = planEscalationRecordTransition(record, request, key, lastSeq, new Date());
        if (!audit) return next;
        const changed = this.sql(
          `UPDATE handoff_records SET state = @state, accepted_by = @accepted_by, accepted_at = @accepted_at,
             cancelled_by = @cancelled_by, cancelled_at = @cancelled_at, closed_at = @closed_at, close_reason = @close_reason
           WHERE id = @id AND state = @from`,
        ).run({ ...next, from: record.state }).changes;
        if (changed !== 1) throw escalationRecordRaced(id, request);
        this.insertAudit(audit);
        return next;
      })
      .immediate();
  }

  /** The outcome a spent key produced, or null when the key is new. */
  private replay(id: string, transition: EscalationRecordAuditRow['transition'], key: string): EscalationRecord | null {
    const prior = this.sql('SELECT record_id, transition, seq FROM handoff_audit WHERE idempotency_key = ?').get(
      key,
    ) as Pick<EscalationRecordAuditRow, 'record_id' | 'transition' | 'seq'> | undefined;
    if (!prior) return null;
    const seq = replayEscalationRecordKey(prior, id, transition, key);
    return escalationRecordAt(
      this.readEscalationRecord(id)!,
      this.sql('SELECT * FROM handoff_audit WHERE record_id = ? ORDER BY seq')
        .all(id)
        .map((r) => auditFromRow(r as AuditRow)),
      seq,
    );
  }

  private readEscalationRecord(id: string): EscalationRecord | null {
    const row = this.sql(`SELECT ${HANDOFF_COLUMNS} FROM handoff_records WHERE id = ?`).get(id) as
      EscalationRecordRow | undefined;
    return row ? escalationRecordFromRow(row) : null;
  }

  private insertAudit(row: EscalationRecordAuditRow): void {
    this.sql(
      'INSERT INTO handoff_audit (record_id, seq, transition, actor, at, idempotency_key, detail) VALUES (?, ?, ?, ?, ?, ?, ?)',
    ).run(row.record_id, row.seq, row.transition, row.actor, row.at, row.idempotency_key, JSON.stringify(row.detail));
  }

  async schemaVersion(): Promise<number> {
    return (this.sql('SELECT coalesce(max(version), 0) FROM handrail_migrations').pluck().get() as number) ?? 0;
  }

  async close(): Promise<void> {
    this.db.close();
  }
}

/** Distinct list queries kept between writes (the API's are a few per project and user). */
const MAX_LISTINGS = 64;

/** A record's columns (not `created_order`, which only orders the list). */
const HANDOFF_COLUMNS =
  'id, workspace, project, job_id, summary, open_questions, next_steps, owner, state, created_by, created_at, accepted_by, accepted_at, cancelled_by, cancelled_at, closed_at, close_reason';
type EscalationRecordRow = Omit<EscalationRecord, 'open_questions' | 'next_steps'> & {
  open_questions: string;
  next_steps: string;
};
type AuditRow = Omit<EscalationRecordAuditRow, 'detail'> & { detail: string };

function escalationRecordFromRow(row: EscalationRecordRow): EscalationRecord {
  return {
    ...row,
    open_questions: JSON.parse(row.open_questions) as string[],
    next_steps: JSON.parse(row.next_steps) as string[],
  };
}

function auditFromRow(row: AuditRow): EscalationRecordAuditRow {
  return { ...row, detail: JSON.parse(row.detail) as EscalationRecordAuditRow['detail'] };
}
