/**
 * The store: CRM records, idempotent writes, content-addressed artifacts, stage completions and
 * the help-center full-text index. Embedded SQLite by default; PostgreSQL when `DATABASE_URL` is
 * set. Both backends run the same numbered migrations (see migrations.ts) and the same test suite.
 */
import path from 'node:path';
import { loadConfig } from '../../config';
import type { Store } from './types';

export * from './types';
export * from './effects';

export interface StoreConfig {
  /** PostgreSQL connection URL; unset means embedded SQLite. */
  databaseUrl?: string;
  /** SQLite file (or `:memory:`); defaults to `<dataDir>/handrail.sqlite`. */
  sqlitePath?: string;
  dataDir?: string;
}

/** Opens (and migrates) the configured store: PostgreSQL when `databaseUrl` is set, else SQLite. */
export async function openStore(config: StoreConfig = loadConfig()): Promise<Store> {
  if (config.databaseUrl) {
    const { openPostgresStore } = await import('./postgres');
    return openPostgresStore(config.databaseUrl);
  }
  const { openSqliteStore } = await import('./sqlite');
  const dataDir = config.dataDir ?? loadConfig().dataDir;
  return openSqliteStore(config.sqlitePath ?? path.join(dataDir, 'handrail.sqlite'));
}
