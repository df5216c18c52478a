/**
 * The backends every store test runs on: embedded SQLite, and PostgreSQL from a throwaway
 * cluster (Debian's packages, installed on demand). PostgreSQL is skipped, with the reason in
 * the suite name, only when its binaries cannot be had on this machine.
 */
import os from 'node:os';
import path from 'node:path';
import fs from 'node:fs';
import pg from 'pg';
import { afterAll, beforeAll } from 'vitest';
import { openStore, type Store, type StoreConfig } from '../../src/worker/store';
import { startDevPostgres, type DevPostgres } from '../../src/devtools/pg-dev';
import { ensurePostgresBinaries } from '../../src/devtools/postgres-server';

export interface Backend {
  name: 'sqlite' | 'postgres';
  /** Why this backend is skipped here, or null. */
  skip: string | null;
  /** A fresh, empty store config; call inside tests or hooks. */
  freshConfig(): Promise<StoreConfig>;
}

/** Why PostgreSQL cannot be had here (the first line of the install error), or null. */
export function postgresUnavailable(): string | null {
  try {
    ensurePostgresBinaries();
    return null;
  } catch (error) {
    return (error as Error).message.split('\n', 1)[0] ?? 'postgres unavailable';
  }
}

/** Registers the hooks that start and stop PostgreSQL for the calling test file. */
export function storeBackends(): Backend[] {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'handrail-store-'));
  let databases = 0;
  let server: DevPostgres | undefined;
  const pgSkip = postgresUnavailable();
  beforeAll(async () => {
    if (!pgSkip) server = await startDevPostgres();
  }, 120_000);
  afterAll(async () => {
    await server?.stop();
    fs.rmSync(tmp, { recursive: true, force: true });
  });
  return [
    {
      name: 'sqlite',
      skip: null,
      freshConfig: async () => ({ sqlitePath: path.join(tmp, `store-${databases++}.sqlite`) }),
    },
    {
      name: 'postgres',
      skip: pgSkip,
      // One database per test: the same isolation a fresh SQLite file gives.
      freshConfig: async () => {
        if (!server) throw new Error('postgres was not started');
        const name = `t${databases++}`;
        const admin = new pg.Client({ connectionString: server.url });
        await admin.connect();
        await admin.query(`CREATE DATABASE ${name}`);
        await admin.end();
        return { databaseUrl: server.url.replace(/\/[^/]+$/, `/${name}`) };
      },
    },
  ];
}

export async function openFresh(backend: Backend): Promise<Store> {
  return openStore(await backend.freshConfig());
}
