/**
 * Numbered schema migrations, one entry per version with the SQL for each backend. The two
 * dialects differ only where they must (full-text search, time types); the tables,
 * keys and unique constraints are the same, so both backends have the same semantics.
 * JSON is kept as text on both, so a stored receipt or result comes back byte for byte (jsonb
 * would reorder keys). Never edit an applied migration: append a new version.
 */
export interface Migration {
  version: number;
  name: string;
  sqlite: string;
  postgres: string;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'core tables: artifacts, stage completions, crm, writes',
    sqlite: `
      CREATE TABLE artifacts (
        sha256      TEXT PRIMARY KEY,
        content     TEXT NOT NULL,
        created_at  TEXT NOT NULL
      );
      CREATE TABLE stage_completions (
        delivery_key TEXT PRIMARY KEY,
        result       TEXT NOT NULL,
        recorded_at  TEXT NOT NULL
      );
      CREATE TABLE crm_tickets (
        ticket_id   TEXT PRIMARY KEY,
        customer_id TEXT NOT NULL,
        status      TEXT NOT NULL,
        note        TEXT NOT NULL,
        revision    INTEGER NOT NULL,
        updated_by  TEXT NOT NULL,
        updated_at  TEXT NOT NULL
      );
      CREATE TABLE writes (
        idempotency_key TEXT PRIMARY KEY,
        job_id          TEXT NOT NULL,
        receipt         TEXT NOT NULL,
        written_at      TEXT NOT NULL
      );
      CREATE INDEX writes_by_job ON writes (job_id, written_at);
    `,
    postgres: `
      CREATE TABLE artifacts (
        sha256      text PRIMARY KEY,
        content     text NOT NULL,
        created_at  timestamptz NOT NULL DEFAULT now()
      );
      CREATE TABLE stage_completions (
        delivery_key text PRIMARY KEY,
        result       text NOT NULL,
        recorded_at  timestamptz NOT NULL DEFAULT now()
      );
      CREATE TABLE crm_tickets (
        ticket_id   text PRIMARY KEY,
        customer_id text NOT NULL,
        status      text NOT NULL,
        note        text NOT NULL,
        revision    integer NOT NULL,
        updated_by  text NOT NULL,
        updated_at  timestamptz NOT NULL
      );
      CREATE TABLE writes (
        idempotency_key text PRIMARY KEY,
        job_id          text NOT NULL,
        receipt         text NOT NULL,
        written_at      timestamptz NOT NULL
      );
      CREATE INDEX writes_by_job ON writes (job_id, written_at);
    `,
  },
  {
    version: 2,
    name: 'help-center chunks with full-text search',
    // FTS5 external-content table kept in step by triggers; bm25 weights are given at query time.
    sqlite: `
      CREATE TABLE help_chunks (
        id             INTEGER PRIMARY KEY,
        chunk_key      TEXT NOT NULL UNIQUE,
        article_slug   TEXT NOT NULL,
        title          TEXT NOT NULL,
        tags           TEXT NOT NULL,
        position       INTEGER NOT NULL,
        text           TEXT NOT NULL,
        content_sha256 TEXT NOT NULL
      );
      CREATE VIRTUAL TABLE help_chunks_fts USING fts5(
        title, tags, text,
        content='help_chunks', content_rowid='id',
        tokenize='porter unicode61 remove_diacritics 2'
      );
      CREATE TRIGGER help_chunks_ai AFTER INSERT ON help_chunks BEGIN
        INSERT INTO help_chunks_fts (rowid, title, tags, text) VALUES (new.id, new.title, new.tags, new.text);
      END;
      CREATE TRIGGER help_chunks_ad AFTER DELETE ON help_chunks BEGIN
        INSERT INTO help_chunks_fts (help_chunks_fts, rowid, title, tags, text) VALUES ('delete', old.id, old.title, old.tags, old.text);
      END;
      CREATE TRIGGER help_chunks_au AFTER UPDATE ON help_chunks BEGIN
        INSERT INTO help_chunks_fts (help_chunks_fts, rowid, title, tags, text) VALUES ('delete', old.id, old.title, old.tags, old.text);
        INSERT INTO help_chunks_fts (rowid, title, tags, text) VALUES (new.id, new.title, new.tags, new.text);
      END;
    `,
    // Weights mirror the bm25 column weights on SQLite: title A, tags B, body D.
    postgres: `
      CREATE TABLE help_chunks (
        chunk_key      text PRIMARY KEY,
        article_slug   text NOT NULL,
        title          text NOT NULL,
        tags           text NOT NULL,
        position       integer NOT NULL,
        text           text NOT NULL,
        content_sha256 text NOT NULL,
        search tsvector GENERATED ALWAYS AS (
          setweight(to_tsvector('english', title), 'A') ||
          setweight(to_tsvector('english', tags), 'B') ||
          setweight(to_tsvector('english', text), 'D')
        ) STORED
      );
      CREATE INDEX help_chunks_search ON help_chunks USING gin (search);
    `,
  },
  {
    version: 3,
    name: 'stage completions say which job and stage recorded which artifact, over which package',
    // Provenance: a writer acts only on artifacts a stage recorded for the same job; a repeated
    // delivery is told from a different package under the same key by the package's hash. Rows
    // from before get their job, stage and artifact from the key and result; no hashes (a later
    // delivery under such a key is treated as another package's).
    sqlite: `
      ALTER TABLE stage_completions ADD COLUMN job_id TEXT;
      ALTER TABLE stage_completions ADD COLUMN stage TEXT;
      ALTER TABLE stage_completions ADD COLUMN artifact_uri TEXT;
      ALTER TABLE stage_completions ADD COLUMN delivery_sha TEXT;
      ALTER TABLE stage_completions ADD COLUMN package_sha TEXT;
      UPDATE stage_completions SET job_id = substr(delivery_key, 1, instr(delivery_key, ':') - 1),
        stage = substr(substr(delivery_key, instr(delivery_key, ':') + 1), 1, instr(substr(delivery_key, instr(delivery_key, ':') + 1), ':') - 1),
        artifact_uri = json_extract(result, '$.artifact.uri');
      CREATE INDEX stage_completions_by_artifact ON stage_completions (job_id, artifact_uri);
    `,
    postgres: `
      ALTER TABLE stage_completions ADD COLUMN job_id text;
      ALTER TABLE stage_completions ADD COLUMN stage text;
      ALTER TABLE stage_completions ADD COLUMN artifact_uri text;
      ALTER TABLE stage_completions ADD COLUMN delivery_sha text;
      ALTER TABLE stage_completions ADD COLUMN package_sha text;
      UPDATE stage_completions SET job_id = split_part(delivery_key, ':', 1), stage = split_part(delivery_key, ':', 2),
        artifact_uri = result::json -> 'artifact' ->> 'uri';
      CREATE INDEX stage_completions_by_artifact ON stage_completions (job_id, artifact_uri);
    `,
  },
  {
    version: 4,
    name: "crm tickets by customer, newest change first (an account specialist reads a customer's history)",
    sqlite: `CREATE INDEX crm_tickets_by_customer ON crm_tickets (customer_id, updated_at);`,
    postgres: `CREATE INDEX crm_tickets_by_customer ON crm_tickets (customer_id, updated_at);`,
  },
  {
    version: 5,
    name: 'durable handoff records and their audit trail',
    // The id is made from the begin key (escalationRecordId), so the primary key keeps a retried
    // begin from doubling a record; every other write's key is unique on its audit row.
    // created_order breaks ties between records begun in the same millisecond (newest first).
    sqlite: `
      CREATE TABLE handoff_records (
        id             TEXT PRIMARY KEY,
        created_order  INTEGER NOT NULL UNIQUE,
        workspace      TEXT NOT NULL,
        project        TEXT NOT NULL,
        job_id         TEXT NOT NULL,
        summary        TEXT NOT NULL,
        open_questions TEXT NOT NULL,
        next_steps     TEXT NOT NULL,
        owner          TEXT,
        state          TEXT NOT NULL CHECK (state IN ('open', 'accepted', 'cancelled', 'closed')),
        created_by     TEXT NOT NULL,
        created_at     TEXT NOT NULL,
        accepted_by    TEXT,
        accepted_at    TEXT,
        cancelled_by   TEXT,
        cancelled_at   TEXT,
        closed_at      TEXT,
        close_reason   TEXT
      );
      CREATE INDEX handoff_records_by_project ON handoff_records (workspace, project, state, created_order);
      CREATE INDEX handoff_records_by_job ON handoff_records (job_id);
      CREATE TABLE handoff_audit (
        record_id       TEXT NOT NULL REFERENCES handoff_records (id),
        seq             INTEGER NOT NULL,
        transition      TEXT NOT NULL,
        actor           TEXT,
        at              TEXT NOT NULL,
        idempotency_key TEXT NOT NULL UNIQUE,
        detail          TEXT NOT NULL,
        PRIMARY KEY (record_id, seq)
      );
    `,
    postgres: `
      CREATE TABLE handoff_records (
        id             text PRIMARY KEY,
        created_order  bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
        workspace      text NOT NULL,
        project        text NOT NULL,
        job_id         text NOT NULL,
        summary        text NOT NULL,
        open_questions text NOT NULL,
        next_steps     text NOT NULL,
        owner          text,
        state          text NOT NULL CHECK (state IN ('open', 'accepted', 'cancelled', 'closed')),
        created_by     text NOT NULL,
        created_at     timestamptz NOT NULL,
        accepted_by    text,
        accepted_at    timestamptz,
        cancelled_by   text,
        cancelled_at   timestamptz,
        closed_at      timestamptz,
        close_reason   text
      );
      CREATE INDEX handoff_records_by_project ON handoff_records (workspace, project, state, created_order);
      CREATE INDEX handoff_records_by_job ON handoff_records (job_id);
      CREATE TABLE handoff_audit (
        record_id       text NOT NULL REFERENCES handoff_records (id),
        seq             integer NOT NULL,
        transition      text NOT NULL,
        actor           text,
        at              timestamptz NOT NULL,
        idempotency_key text NOT NULL UNIQUE,
        detail          text NOT NULL,
        PRIMARY KEY (record_id, seq)
      );
    `,
  },
  {
    version: 6,
    name: 'writes say which system they wrote, what they touched there, and the hash of what they wrote',
    // The write-once helper keys any system's writes here; rows from before came from the CRM
    // writer, whose receipt names its system, record and note hash.
    sqlite: `
      ALTER TABLE writes ADD COLUMN system TEXT;
      ALTER TABLE writes ADD COLUMN reference TEXT;
      ALTER TABLE writes ADD COLUMN payload_sha256 TEXT;
      UPDATE writes SET system = json_extract(receipt, '$.system'), reference = json_extract(receipt, '$.record_id'),
        payload_sha256 = substr(json_extract(receipt, '$.note_hash'), 8);
    `,
    postgres: `
      ALTER TABLE writes ADD COLUMN system text, ADD COLUMN reference text, ADD COLUMN payload_sha256 text;
      UPDATE writes SET system = receipt::json ->> 'system', reference = receipt::json ->> 'record_id',
        payload_sha256 = substring(receipt::json ->> 'note_hash' from 8);
    `,
  },
  {
    version: 7,
    name: 'stage steps: what a model stage completed within one delivery (model replies, tool results)',
    // A retried stage attempt reads its delivery's steps back and redoes none of them; a step is
    // recorded once (first wins), like the stage's own completion.
    sqlite: `
      CREATE TABLE stage_steps (
        delivery_key TEXT NOT NULL,
        step         TEXT NOT NULL,
        content      TEXT NOT NULL,
        recorded_at  TEXT NOT NULL,
        PRIMARY KEY (delivery_key, step)
      );
    `,
    postgres: `
      CREATE TABLE stage_steps (
        delivery_key text NOT NULL,
        step         text NOT NULL,
        content      text NOT NULL,
        recorded_at  timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (delivery_key, step)
      );
    `,
  },
  {
    version: 8,
    name: 'effect ledger: each outbound write noted before it is sent (intent) and after (outcome)',
    // One row per write key. An intent with neither reference nor error is a write in doubt: the
    // writer may have died after the system committed and before the outcome was noted.
    sqlite: `
      CREATE TABLE effects (
        write_key       TEXT PRIMARY KEY,
        job_id          TEXT NOT NULL,
        system          TEXT NOT NULL,
        request_sha256  TEXT NOT NULL,
        request         TEXT NOT NULL,
        sends           INTEGER NOT NULL,
        sent_at         TEXT NOT NULL,
        reference       TEXT,
        error           TEXT,
        outcome_at      TEXT,
        resolution      TEXT,
        send_allowed_by TEXT,
        decision_id     TEXT
      );
      CREATE INDEX effects_by_job ON effects (job_id, sent_at);
    `,
    postgres: `
      CREATE TABLE effects (
        write_key       text PRIMARY KEY,
        job_id          text NOT NULL,
        system          text NOT NULL,
        request_sha256  text NOT NULL,
        request         text NOT NULL,
        sends           integer NOT NULL,
        sent_at         timestamptz NOT NULL,
        reference       text,
        error           text,
        outcome_at      timestamptz,
        resolution      text,
        send_allowed_by text,
        decision_id     text
      );
      CREATE INDEX effects_by_job ON effects (job_id, sent_at);
    `,
  },
  {
    version: 9,
    name: "job streams: each job's followed events in one growing order (durable keys and live text with an expiry)",
    // `key` names a durable event once (the first server to see it numbers it); live rows (model
    // text) carry `expires_at`. A job's newest row is never pruned, so a seq is never given twice.
    sqlite: `
      CREATE TABLE job_stream (
        job_id     TEXT NOT NULL,
        seq        INTEGER NOT NULL,
        key        TEXT NOT NULL,
        body       TEXT NOT NULL,
        expires_at TEXT,
        PRIMARY KEY (job_id, seq),
        UNIQUE (job_id, key)
      );
      CREATE INDEX job_stream_expiry ON job_stream (expires_at) WHERE expires_at IS NOT NULL;
    `,
    postgres: `
      CREATE TABLE job_stream (
        job_id     text NOT NULL,
        seq        bigint NOT NULL,
        key        text NOT NULL,
        body       text NOT NULL,
        expires_at timestamptz,
        PRIMARY KEY (job_id, seq),
        UNIQUE (job_id, key)
      );
      CREATE INDEX job_stream_expiry ON job_stream (expires_at) WHERE expires_at IS NOT NULL;
    `,
  },
];

export const LATEST_SCHEMA_VERSION = Math.max(...MIGRATIONS.map((m) => m.version));
