/** The store on PostgreSQL (node-postgres pool): used when DATABASE_URL is set. */
import pg from 'pg';
import type { ReceiptV1 } from '../../../contracts';
import type { StageResult } from '../../../contracts/stages';
import { sha256Hex } from './content';
import {
  crmReceipt,
  jobIdOfKey,
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
  type Store,
} from './types';
import { MIGRATIONS } from './migrations';

/** Arbitrary constant: the advisory lock that serialises migrators across processes. */
const MIGRATION_LOCK = 4_711_001;
const UNIQUE_VIOLATION = '23505';

export async function openPostgresStore(databaseUrl: string): Promise<Store> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 10 });
  try {
    await inTransaction(pool, async (client) => {
      await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
      await client.query(
        'CREATE TABLE IF NOT EXISTS handrail_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())',
      );
      const applied = new Set((await client.query<{ version: number }>('SELECT version FROM handrail_migrations')).rows.map((r) => r.version));
      for (const migration of MIGRATIONS) {
        if (applied.has(migration.version)) continue;
        await client.query(migration.postgres);
        await client.query('INSERT INTO handrail_migrations (version, name) VALUES ($1, $2)', [migration.version, migration.name]);
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
    await this.pool.query('INSERT INTO artifacts (sha256, content) VALUES ($1, $2) ON CONFLICT (sha256) DO NOTHING', [hex, content]);
    return hex;
  }

  async getContent(hex: string): Promise<string | null> {
    const { rows } = await this.pool.query<{ content: string }>('SELECT content FROM artifacts WHERE sha256 = $1', [hex]);
    return rows[0]?.content ?? null;
  }

  async recordStageCompletion(deliveryKey: string, result: StageResult, delivery?: DeliveryFacts): Promise<StageRecord> {
    // A concurrent insert of the same key waits on the unique index, then does nothing; the
    // SELECT that follows (new snapshot under READ COMMITTED) sees whichever result won.
    await this.pool.query(
      `INSERT INTO stage_completions (delivery_key, result, job_id, stage, artifact_uri, delivery_sha, package_sha)
       VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (delivery_key) DO NOTHING`,
      [deliveryKey, JSON.stringify(result), delivery?.job_id ?? null, delivery?.stage ?? null, result.artifact.uri, delivery?.delivery_sha ?? null, delivery?.package_sha ?? null],
    );
    return (await this.findStageRecord(deliveryKey))!;
  }

  async findStageCompletion(deliveryKey: string): Promise<StageResult | null> {
    return (await this.findStageRecord(deliveryKey))?.result ?? null;
  }

  async findStageRecord(deliveryKey: string): Promise<StageRecord | null> {
    const { rows } = await this.pool.query<{ result: string; delivery_sha: string | null; package_sha: string | null }>(
      'SELECT result, delivery_sha, package_sha FROM stage_completions WHERE delivery_key = $1',
      [deliveryKey],
    );
    const row = rows[0];
    return row ? { result: JSON.parse(row.result) as StageResult, delivery_sha: row.delivery_sha, package_sha: row.package_sha } : null;
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
        const prior = await client.query<{ receipt: string }>('SELECT receipt FROM writes WHERE idempotency_key = $1', [idempotencyKey]);
        if (prior.rows[0]) return JSON.parse(prior.rows[0].receipt) as ReceiptV1;

        const before = await client.query<{ status: string; note: string }>('SELECT status, note FROM crm_tickets WHERE ticket_id = $1', [
          patch.ticket_id,
        ]);
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
        await client.query('INSERT INTO writes (idempotency_key, job_id, receipt, written_at) VALUES ($1, $2, $3, $4)', [
          idempotencyKey,
          jobId,
          JSON.stringify(receipt),
          now,
        ]);
        return receipt;
      });
    } catch (error) {
      // The same key raced in under another record's lock: the unique key kept the first write
      // and rolled this one back whole; hand back the first receipt.
      if (!isUniqueViolation(error)) throw error;
      const { rows } = await this.pool.query<{ receipt: string }>('SELECT receipt FROM writes WHERE idempotency_key = $1', [idempotencyKey]);
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

  async listWrites(jobId: string): Promise<ReceiptV1[]> {
    const { rows } = await this.pool.query<{ receipt: string }>(
      'SELECT receipt FROM writes WHERE job_id = $1 ORDER BY written_at, idempotency_key',
      [jobId],
    );
    return rows.map((r) => JSON.parse(r.receipt) as ReceiptV1);
  }

  async syncHelpCenter(chunks: readonly HelpChunk[]): Promise<CorpusSyncReport> {
    return inTransaction(this.pool, async (client) => {
      // Serialise concurrent loaders so their counts stay truthful.
      await client.query('LOCK TABLE help_chunks IN SHARE ROW EXCLUSIVE MODE');
      const stored = new Map(
        (await client.query<{ chunk_key: string; content_sha256: string }>('SELECT chunk_key, content_sha256 FROM help_chunks')).rows.map(
          (r) => [r.chunk_key, r.content_sha256],
        ),
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

  async schemaVersion(): Promise<number> {
    const { rows } = await this.pool.query<{ version: number }>('SELECT coalesce(max(version), 0) AS version FROM handrail_migrations');
    return rows[0]?.version ?? 0;
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}
