/** The store on PostgreSQL (node-postgres pool): used when DATABASE_URL is set. */
import pg from 'pg';
import type { WriteReceipt } from '../../../contracts';
import type { ReceiptV1 } from '../../../contracts/pipelines/ticket-artifacts';
import type { StageResult } from '../../../contracts/stages';
import {
  ESCALATION_RECORD_LIST_DEFAULT,
  EscalationRecordBeginInput,
  EscalationRecordIdempotencyKey,
  EscalationRecordListQuery,
  EscalationRecordTransitionError,
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
  'INSERT INTO writes (idempotency_key, job_id, receipt, written_at, system, reference, payload_sha256) VALUES ($1, $2, $3, $4, $5, $6, $7)';

/** Arbitrary constant: the advisory lock that serialises migrators across processes. */
const MIGRATION_LOCK = 4_711_001;
const UNIQUE_VIOLATION = '23505';

export async function openPostgresStore(databaseUrl: string): Promise<Store> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 10 });
  // An idle connection the server cuts (a restart, a failover) is dropped by the pool, which then
  // emits 'error': unheard, that kills the process, a worker's included. The next query connects anew.
  pool.on('error', (error) =>
    console.error(
      `handrail store: PostgreSQL closed an idle connection (${error.message}); the next query opens a new one`,
    ),
  );
  try {
    await inTransaction(pool, async (client) => {
      await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
      await client.query(
        'CREATE TABLE IF NOT EXISTS handrail_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())',
      );
      const applied = new Set(
        (await client.query<{ version: number }>('SELECT version FROM handrail_migrations')).rows.map((r) => r.version),
      );
      for (const migration of MIGRATIONS) {
        if (applied.has(migration.version)) continue;
        await client.query(migration.postgres);
        await client.query('INSERT INTO handrail_migrations (version, name) VALUES ($1, $2)', [
          migration.version,
          migration.name,
        ]);
      }
    });
  } catch (error) {
    await pool.end();
    throw error;
  }
  return new PostgresStore(pool);
}

async function inTransaction<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK');
    throw error;
  } finally {
    client.release();
  }
}

function isUniqueViolation(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === UNIQUE_VIOLATION;
}

class PostgresStore implements Store {
  readonly backend = 'postgres' as const;

  constructor(private readonly pool: pg.Pool) {}

  async putContent(content: string): Promise<string> {
    const hex = sha256Hex(content);
    await this.pool.query('INSERT INTO artifacts (sha256, content) VALUES ($1, $2) ON CONFLICT (sha256) DO NOTHING', [
      hex,
      content,
    ]);
    return hex;
  }

  async getContent(hex: string): Promise<string | null> {
    const { rows } = await this.pool.query<{ content: string }>('SELECT content FROM artifacts WHERE sha256 = $1', [
      hex,
    ]);
    return rows[0]?.content ?? null;
  }

  async recordStageCompletion(
    deliveryKey: string,
    result: StageResult,
    delivery?: DeliveryFacts,
  ): Promise<StageRecord> {
    // A concurrent insert of the same key waits on the unique index, then does nothing; the
    // SELECT that follows (new snapshot under READ COMMITTED) sees whichever result won. The
    // completion answers every later attempt, so the steps that led to it go in the same
    // statement (a data-modifying WITH always runs in full): one round trip, atomic like SQLite's.
    await this.pool.query(
      `WITH done AS (DELETE FROM stage_steps WHERE delivery_key = $1)
       INSERT INTO stage_completions (delivery_key, result, job_id, stage, artifact_uri, delivery_sha, package_sha)
       VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (delivery_key) DO NOTHING`,
      [
        deliveryKey,
        JSON.stringify(result),
        delivery?.job_id ?? null,
        delivery?.stage ?? null,
        result.artifact.uri,
        delivery?.delivery_sha ?? null,
        delivery?.package_sha ?? null,
      ],
    );
    return (await this.findStageRecord(deliveryKey))!;
  }

  async findStageCompletion(deliveryKey: string): Promise<StageResult | null> {
    return (await this.findStageRecord(deliveryKey))?.result ?? null;
  }

  async recordStageStep(deliveryKey: string, step: string, content: string): Promise<string> {
    await this.pool.query(
      'INSERT INTO stage_steps (delivery_key, step, content) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING',
      [deliveryKey, step, content],
    );
    const { rows } = await this.pool.query<{ content: string }>(
      'SELECT content FROM stage_steps WHERE delivery_key = $1 AND step = $2',
      [deliveryKey, step],
    );
    return rows[0]!.content;
  }

  async pruneStageSteps(recordedBefore: Date): Promise<number> {
    const { rowCount } = await this.pool.query(
      'DELETE FROM stage_steps WHERE recorded_at < $1 AND left(delivery_key, $2) <> $3',
      [recordedBefore, WAITING_STEPS_PREFIX.length, WAITING_STEPS_PREFIX],
    );
    return rowCount ?? 0;
  }

  async findStageSteps(deliveryKey: string): Promise<Map<string, string>> {
    const { rows } = await this.pool.query<{ step: string; content: string }>(
      'SELECT step, content FROM stage_steps WHERE delivery_key = $1',
      [deliveryKey],
    );
    return new Map(rows.map((row) => [row.step, row.content]));
  }

  async appendStreamEntries(jobId: string, entries: readonly NewStreamEntry[]): Promise<Map<string, number>> {
    const seqs = new Map<string, number>();
    for (const e of entries) {
      // Two servers may number a job's next entry at once: the loser's insert does nothing (the
      // seq is taken), it finds its key unnumbered and tries again one further on.
      for (let attempt = 0; ; attempt++) {
        await this.pool.query(
          `INSERT INTO job_stream (job_id, seq, key, body, expires_at)
           SELECT $1, coalesce(max(seq), 0) + 1, $2, $3, $4 FROM job_stream WHERE job_id = $1
           ON CONFLICT DO NOTHING`,
          [jobId, e.key, e.body, e.expiresAt ?? null],
        );
        const { rows } = await this.pool.query<{ seq: string }>(
          'SELECT seq FROM job_stream WHERE job_id = $1 AND key = $2',
          [jobId, e.key],
        );
        if (rows[0]) {
          seqs.set(e.key, Number(rows[0].seq));
          break;
        }
        if (attempt >= 20) throw new Error(`job ${jobId}: could not number stream entry ${e.key}`);
      }
    }
    return seqs;
  }

  async readStreamEntries(jobId: string, afterSeq: number, limit: number): Promise<StreamEntry[]> {
    const { rows } = await this.pool.query<{ seq: string; key: string; body: string }>(
      `SELECT seq, key, body FROM job_stream WHERE job_id = $1 AND seq > $2 AND (expires_at IS NULL OR expires_at > now())
       ORDER BY seq LIMIT $3`,
      [jobId, afterSeq, limit],
    );
    return rows.map((r) => ({ seq: Number(r.seq), key: r.key, body: r.body }));
  }

  async pruneStreamEntries(now: Date): Promise<number> {
    const { rowCount } = await this.pool.query(
      `DELETE FROM job_stream WHERE expires_at <= $1
       AND seq < (SELECT max(seq) FROM job_stream newest WHERE newest.job_id = job_stream.job_id)`,
      [now],
    );
    return rowCount ?? 0;
  }

  async findStageRecord(deliveryKey: string): Promise<StageRecord | null> {
    const { rows } = await this.pool.query<{ result: string; delivery_sha: string | null; package_sha: string | null }>(
      'SELECT result, delivery_sha, package_sha FROM stage_completions WHERE delivery_key = $1',
      [deliveryKey],
    );
    const row = rows[0];
    return row
      ? { result: JSON.parse(row.result) as StageResult, delivery_sha: row.delivery_sha, package_sha: row.package_sha }
      : null;
  }

  async findRecordedArtifacts(jobId: string, uri: string): Promise<{ stage: string; result: StageResult }[]> {
    const { rows } = await this.pool.query<{ stage: string; result: string }>(
      'SELECT stage, result FROM stage_completions WHERE job_id = $1 AND artifact_uri = $2 ORDER BY recorded_at',
      [jobId, uri],
    );
    return rows.map((row) => ({ stage: row.stage, result: JSON.parse(row.result) as StageResult }));
  }

  async patchCrmOnce(idempotencyKey: string, patch: CrmPatch): Promise<ReceiptV1> {
    const jobId = jobIdOfKey(idempotencyKey);
    try {
      return await inTransaction(this.pool, async (client) => {
        // One writer per CRM record at a time (the row may not exist yet, so FOR UPDATE cannot
        // lock it): the read of the prior state and the patch then see no interleaving.
        await client.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`crm_tickets/${patch.ticket_id}`]);
        const prior = await client.query<{ receipt: string }>('SELECT receipt FROM writes WHERE idempotency_key = $1', [
          idempotencyKey,
        ]);
        if (prior.rows[0]) return JSON.parse(prior.rows[0].receipt) as ReceiptV1;

        const before = await client.query<{ status: string; note: string }>(
          'SELECT status, note FROM crm_tickets WHERE ticket_id = $1',
          [patch.ticket_id],
        );
        const now = new Date();
        const receipt = crmReceipt(idempotencyKey, patch, before.rows[0] ?? null, sha256Hex(patch.note), now);
        if (receipt.status !== 'unchanged') {
          await client.query(
            `INSERT INTO crm_tickets (ticket_id, customer_id, status, note, revision, updated_by, updated_at)
             VALUES ($1, $2, $3, $4, 1, $5, $6)
             ON CONFLICT (ticket_id) DO UPDATE SET customer_id = excluded.customer_id, status = excluded.status,
               note = excluded.note, revision = crm_tickets.revision + 1, updated_by = excluded.updated_by,
               updated_at = excluded.updated_at`,
            [patch.ticket_id, patch.customer_id, patch.status, patch.note, idempotencyKey, now],
          );
        }
        await client.query(WRITE_INSERT, [
          idempotencyKey,
          jobId,
          JSON.stringify(receipt),
          now,
          receipt.system,
          receipt.record_id,
          sha256Hex(patch.note),
        ]);
        return receipt;
      });
    } catch (error) {
      // The same key raced in under another record's lock: the unique key kept the first write
      // and rolled this one back whole; hand back the first receipt.
      if (!isUniqueViolation(error)) throw error;
      const { rows } = await this.pool.query<{ receipt: string }>(
        'SELECT receipt FROM writes WHERE idempotency_key = $1',
        [idempotencyKey],
      );
      if (!rows[0]) throw error;
      return JSON.parse(rows[0].receipt) as ReceiptV1;
    }
  }

  async getCrmTicket(ticketId: string): Promise<CrmTicket | null> {
    const { rows } = await this.pool.query<CrmTicket>(
      'SELECT ticket_id, customer_id, status, note, revision, updated_by FROM crm_tickets WHERE ticket_id = $1',
      [ticketId],
    );
    return rows[0] ?? null;
  }

  async listCustomerTickets(customerId: string, limit: number, except?: string): Promise<CustomerTicket[]> {
    const { rows } = await this.pool.query<CrmTicket & { updated_at: Date }>(
      `SELECT ticket_id, customer_id, status, note, revision, updated_by, updated_at FROM crm_tickets
       WHERE customer_id = $1 AND ticket_id IS DISTINCT FROM $2 ORDER BY updated_at DESC, ticket_id LIMIT $3`,
      [customerId, except ?? null, limit],
    );
    // timestamptz comes back as a Date; SQLite keeps the ISO text the write stored.
    return rows.map((row) => ({ ...row, updated_at: row.updated_at.toISOString() }));
  }

  async writeOnce(write: WriteRequest): Promise<WriteReceipt> {
    const jobId = jobIdOfKey(write.key);
    const now = new Date();
    const row: WriteRow = {
      idempotency_key: write.key,
      system: write.system,
      reference: write.reference,
      payload_sha256: sha256Hex(write.payload),
      written_at: now.toISOString(),
    };
    const receipt = writeReceiptOf(row, 'created');
    // A concurrent insert of the same key waits on the primary key, then does nothing; the
    // SELECT that follows sees whichever write won.
    const inserted = await this.pool.query(`${WRITE_INSERT} ON CONFLICT (idempotency_key) DO NOTHING`, [
      write.key,
      jobId,
      JSON.stringify(receipt),
      now,
      row.system,
      row.reference,
      row.payload_sha256,
    ]);
    if (inserted.rowCount === 1) return receipt;
    const prior = await this.writeRow(write.key);
    if (!prior) throw new Error(`write ${write.key} was neither inserted nor found`);
    return writeReceiptOf(prior, 'existing');
  }

  async recordIntent(intent: EffectIntent): Promise<{ entry: EffectEntry; fresh: boolean }> {
    // A concurrent intent under the same key waits on the primary key, then does nothing.
    const inserted = await this.pool.query(
      `INSERT INTO effects (write_key, job_id, system, request_sha256, request, sends, sent_at)
       VALUES ($1, $2, $3, $4, $5, 1, now()) ON CONFLICT (write_key) DO NOTHING`,
      [intent.key, jobIdOfKey(intent.key), intent.system, sha256Hex(intent.request), intent.request],
    );
    return { entry: await this.effect(intent.key), fresh: inserted.rowCount === 1 };
  }

  async recordResend(key: string): Promise<EffectEntry> {
    await this.pool.query(
      `UPDATE effects SET sends = sends + 1, sent_at = now(), error = NULL, outcome_at = NULL, send_allowed_by = NULL
       WHERE write_key = $1 AND reference IS NULL`,
      [key],
    );
    return this.effect(key);
  }

  async recordOutcome(key: string, outcome: EffectOutcome): Promise<EffectEntry> {
    await this.pool.query(
      `UPDATE effects SET reference = $1, error = $2, outcome_at = now(), resolution = coalesce($3, resolution)
       WHERE write_key = $4 AND reference IS NULL`,
      [
        'reference' in outcome ? outcome.reference : null,
        'error' in outcome ? outcome.error : null,
        outcome.resolution ?? null,
        key,
      ],
    );
    return this.effect(key);
  }

  async decideInDoubt(key: string, decision: InDoubtDecision): Promise<EffectEntry> {
    return inTransaction(this.pool, async (client) => {
      const { rows } = await client.query<EffectRow>(
        `SELECT ${EFFECT_COLUMNS} FROM effects WHERE write_key = $1 FOR UPDATE`,
        [key],
      );
      if (!rows[0]) throw effectNotFound(key);
      const entry = effectOf(rows[0]);
      if (entry.decision_id === decision.id) return entry;
      refuseSettled(entry);
      const { rows: decided } = await ('happened' in decision
        ? client.query<EffectRow>(
            `UPDATE effects SET reference = $1, outcome_at = now(), resolution = 'human_happened', decision_id = $3 WHERE write_key = $2 RETURNING ${EFFECT_COLUMNS}`,
            [decision.happened, key, decision.id],
          )
        : client.query<EffectRow>(
            `UPDATE effects SET send_allowed_by = $1, decision_id = $3 WHERE write_key = $2 RETURNING ${EFFECT_COLUMNS}`,
            [decision.actor, key, decision.id],
          ));
      return effectOf(decided[0]!);
    });
  }

  async findEffect(key: string): Promise<EffectEntry | null> {
    const { rows } = await this.pool.query<EffectRow>(`SELECT ${EFFECT_COLUMNS} FROM effects WHERE write_key = $1`, [
      key,
    ]);
    return rows[0] ? effectOf(rows[0]) : null;
  }

  async listEffects(jobId: string): Promise<EffectEntry[]> {
    const { rows } = await this.pool.query<EffectRow>(
      `SELECT ${EFFECT_COLUMNS} FROM effects WHERE job_id = $1 ORDER BY sent_at, write_key`,
      [jobId],
    );
    return rows.map(effectOf);
  }

  private async effect(key: string): Promise<EffectEntry> {
    const entry = await this.findEffect(key);
    if (!entry) throw effectNotFound(key);
    return entry;
  }

  async findWrite(key: string): Promise<WriteReceipt | null> {
    const row = await this.writeRow(key);
    return row ? writeReceiptOf(row, 'created') : null;
  }

  private async writeRow(key: string): Promise<WriteRow | undefined> {
    const { rows } = await this.pool.query<WriteRow>(`SELECT ${WRITE_COLUMNS} FROM writes WHERE idempotency_key = $1`, [
      key,
    ]);
    return rows[0];
  }

  async listWrites(jobId: string): Promise<WriteReceipt[]> {
    const { rows } = await this.pool.query<WriteRow>(
      `SELECT ${WRITE_COLUMNS} FROM writes WHERE job_id = $1 ORDER BY written_at, idempotency_key`,
      [jobId],
    );
    return rows.map((row) => writeReceiptOf(row, 'created'));
  }

  async syncHelpCenter(chunks: readonly HelpChunk[]): Promise<CorpusSyncReport> {
    return inTransaction(this.pool, async (client) => {
      // Serialise concurrent loaders so their counts stay truthful.
      await client.query('LOCK TABLE help_chunks IN SHARE ROW EXCLUSIVE MODE');
      const stored = new Map(
        (
          await client.query<{ chunk_key: string; content_sha256: string }>(
            'SELECT chunk_key, content_sha256 FROM help_chunks',
          )
        ).rows.map((r) => [r.chunk_key, r.content_sha256]),
      );
      const { upserts, stale, report } = planCorpusSync(stored, chunks);
      for (const chunk of upserts) {
        await client.query(
          `INSERT INTO help_chunks (chunk_key, article_slug, title, tags, position, text, content_sha256)
           VALUES ($1, $2, $3, $4, $5, $6, $7)
           ON CONFLICT (chunk_key) DO UPDATE SET article_slug = excluded.article_slug, title = excluded.title,
             tags = excluded.tags, position = excluded.position, text = excluded.text, content_sha256 = excluded.content_sha256`,
          [chunk.key, chunk.article_slug, chunk.title, chunk.tags, chunk.position, chunk.text, chunk.sha],
        );
      }
      if (stale.length > 0) await client.query('DELETE FROM help_chunks WHERE chunk_key = ANY($1)', [stale]);
      return report;
    });
  }

  async searchHelpCenter(terms: readonly string[], limit: number): Promise<HelpHit[]> {
    const words = searchableTerms(terms);
    if (words.length === 0) return [];
    // Single words OR-ed: the same any-term semantics as the FTS5 query on SQLite.
    const { rows } = await this.pool.query<HelpHit>(
      `SELECT chunk_key AS key, title, text, ts_rank(search, query)::float8 AS score
       FROM help_chunks, to_tsquery('english', $1) AS query
       WHERE search @@ query
       ORDER BY score DESC, chunk_key
       LIMIT $2`,
      [words.join(' | '), limit],
    );
    return rows;
  }

  async beginEscalationRecord(input: EscalationRecordBeginInput, key: string): Promise<EscalationRecord> {
    const parsed = EscalationRecordBeginInput.parse(input);
    EscalationRecordIdempotencyKey.parse(key);
    const id = escalationRecordId(key);
    return this.keyed(async (client) => {
      const replay = await this.replay(client, id, 'begin', key);
      if (replay) return replay;
      const at = new Date();
      const record = newEscalationRecord(parsed, key, at);
      // A concurrent begin of the same key (same id) waits here on the primary key and then
      // inserts nothing; it reads the winner's outcome once that commits.
      const inserted = await client.query(
        `INSERT INTO handoff_records (id, workspace, project, job_id, summary, open_questions, next_steps, owner, state, created_by, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) ON CONFLICT (id) DO NOTHING`,
        [
          id,
          record.workspace,
          record.project,
          record.job_id,
          record.summary,
          JSON.stringify(record.open_questions),
          JSON.stringify(record.next_steps),
          record.owner,
          record.state,
          record.created_by,
          at,
        ],
      );
      if (inserted.rowCount === 0) {
        const winner = await this.replay(client, id, 'begin', key);
        if (winner) return winner;
        throw new EscalationRecordTransitionError('conflict', `handoff record ${id} exists without its begin`);
      }
      await insertAudit(client, {
        record_id: id,
        seq: 1,
        transition: 'begin',
        actor: record.created_by,
        at: record.created_at,
        idempotency_key: key,
        detail: { from: null, to: 'open' },
      });
      return record;
    });
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
    return readEscalationRecord(this.pool, id);
  }

  async listEscalationRecords(query: EscalationRecordListQuery): Promise<EscalationRecord[]> {
    const q = EscalationRecordListQuery.parse(query);
    const { rows } = await this.pool.query<EscalationRecordRow>(
      `SELECT * FROM handoff_records WHERE workspace = $1 AND project = $2 AND state = $3
         AND ($5::text IS NULL OR owner IS NULL OR owner = $5) ORDER BY created_order DESC LIMIT $4`,
      [q.workspace, q.project, q.state ?? 'open', q.limit ?? ESCALATION_RECORD_LIST_DEFAULT, q.visible_to ?? null],
    );
    return rows.map(escalationRecordFromRow);
  }

  async escalationRecordAudit(id: string): Promise<EscalationRecordAuditRow[]> {
    return audit(this.pool, id);
  }

  private async transition(id: string, request: EscalationRecordRequest, key: string): Promise<EscalationRecord> {
    EscalationRecordIdempotencyKey.parse(key);
    return this.keyed(async (client) => {
      // The record's row lock serialises every write to it: two accepts at once decide one
      // after the other, and the second sees the first's outcome.
      const locked = await client.query<EscalationRecordRow>('SELECT * FROM handoff_records WHERE id = $1 FOR UPDATE', [
        id,
      ]);
      const replay = await this.replay(client, id, request.transition, key);
      if (replay) return replay;
      if (!locked.rows[0]) throw escalationRecordNotFound(id);
      const record = escalationRecordFromRow(locked.rows[0]);
      const seq = await client.query<{ seq: number }>(
        'SELECT max(seq) AS seq FROM handoff_audit WHERE record_id = $1',
        [id],
      );
      const { next, audit: row } = planEscalationRecordTransition(
        record,
        request,
        key,
        seq.rows[0]?.seq ?? 0,
        new Date(),
      );
      if (!row) return next;
      const changed = await client.query(
        `UPDATE handoff_records SET state = $2, accepted_by = $3, accepted_at = $4, cancelled_by = $5, cancelled_at = $6,
           closed_at = $7, close_reason = $8
         WHERE id = $1 AND state = $9`,
        [
          id,
          next.state,
          next.accepted_by,
          next.accepted_at,
          next.cancelled_by,
          next.cancelled_at,
          next.closed_at,
          next.close_reason,
          record.state,
        ],
      );
      if (changed.rowCount !== 1) throw escalationRecordRaced(id, request);
      await insertAudit(client, row);
      return next;
    });
  }

  /** Runs a keyed escalation record write in a transaction; when the same key raced in on another record
   * (the audit's unique key rolled this one back whole), runs it once more to read that outcome. */
  private async keyed(work: (client: pg.PoolClient) => Promise<EscalationRecord>): Promise<EscalationRecord> {
    try {
      return await inTransaction(this.pool, work);
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
      return inTransaction(this.pool, work);
    }
  }

  private async replay(
    client: pg.PoolClient,
    id: string,
    transition: EscalationRecordAuditRow['transition'],
    key: string,
  ): Promise<EscalationRecord | null> {
    const { rows } = await client.query<Pick<EscalationRecordAuditRow, 'record_id' | 'transition' | 'seq'>>(
      'SELECT record_id, transition, seq FROM handoff_audit WHERE idempotency_key = $1',
      [key],
    );
    if (!rows[0]) return null;
    const seq = replayEscalationRecordKey(rows[0], id, transition, key);
    return escalationRecordAt((await readEscalationRecord(client, id))!, await audit(client, id), seq);
  }

  async schemaVersion(): Promise<number> {
    const { rows } = await this.pool.query<{ version: number }>(
      'SELECT coalesce(max(version), 0) AS version FROM handrail_migrations',
    );
    return rows[0]?.version ?? 0;
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}

type Queryable = Pick<pg.Pool, 'query'> | pg.PoolClient;
type Time = Date | null;
type EscalationRecordRow = Omit<
  EscalationRecord,
  'open_questions' | 'next_steps' | 'created_at' | 'accepted_at' | 'cancelled_at' | 'closed_at'
> & {
  open_questions: string;
  next_steps: string;
  created_order: string;
  created_at: Date;
  accepted_at: Time;
  cancelled_at: Time;
  closed_at: Time;
};
type AuditRow = Omit<EscalationRecordAuditRow, 'detail' | 'at'> & { detail: string; at: Date };

const iso = (t: Time) => t?.toISOString() ?? null;

function escalationRecordFromRow({ created_order: _order, ...row }: EscalationRecordRow): EscalationRecord {
  return {
    ...row,
    open_questions: JSON.parse(row.open_questions) as string[],
    next_steps: JSON.parse(row.next_steps) as string[],
    created_at: row.created_at.toISOString(),
    accepted_at: iso(row.accepted_at),
    cancelled_at: iso(row.cancelled_at),
    closed_at: iso(row.closed_at),
  };
}

async function readEscalationRecord(db: Queryable, id: string): Promise<EscalationRecord | null> {
  const { rows } = await db.query<EscalationRecordRow>('SELECT * FROM handoff_records WHERE id = $1', [id]);
  return rows[0] ? escalationRecordFromRow(rows[0]) : null;
}

async function audit(db: Queryable, id: string): Promise<EscalationRecordAuditRow[]> {
  const { rows } = await db.query<AuditRow>('SELECT * FROM handoff_audit WHERE record_id = $1 ORDER BY seq', [id]);
  return rows.map((row) => ({
    ...row,
    at: row.at.toISOString(),
    detail: JSON.parse(row.detail) as EscalationRecordAuditRow['detail'],
  }));
}

async function insertAudit(client: pg.PoolClient, row: EscalationRecordAuditRow): Promise<void> {
  await client.query(
    'INSERT INTO handoff_audit (record_id, seq, transition, actor, at, idempotency_key, detail) VALUES ($1, $2, $3, $4, $5, $6, $7)',
    [row.record_id, row.seq, row.transition, row.actor, row.at, row.idempotency_key, JSON.stringify(row.detail)],
  );
}
