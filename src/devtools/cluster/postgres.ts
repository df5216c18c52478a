/**
 * The cluster's PostgreSQL: persistent data dir under `<dataDir>/cluster/postgres`, loopback on a
 * fixed port, Debian's binaries (postgres-server.ts), stopped by `down` with pg_ctl.
 */
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import {
  ensureDatabase,
  dataDirOf,
  ensurePostgresBinaries,
  findPostgresBinDir,
  initPostgres,
  makePostgresHome,
  startPostgres,
  stopPostgres,
  type PostgresHome,
} from '../postgres-server';
import { portOpen } from '../devserver/server';
import type { ClusterSettings } from './settings';

/** Running when pg_ctl's pid file is there and the port answers. */
export async function postgresUp(s: ClusterSettings): Promise<boolean> {
  return (
    fs.existsSync(path.join(s.postgres.root, 'data', 'postmaster.pid')) && (await portOpen(s.host, s.postgres.port))
  );
}

/** Starts it (creating the data dir the first time) unless running; true when started here. */
export async function ensurePostgres(s: ClusterSettings, log: (msg: string) => void): Promise<boolean> {
  if (await postgresUp(s)) return false;
  if (await portOpen(s.host, s.postgres.port))
    throw new Error(`port ${s.host}:${s.postgres.port} is taken by another process; the cluster's PostgreSQL needs it`);
  const home = makePostgresHome(ensurePostgresBinaries(), s.postgres.root);
  if (!fs.existsSync(dataDirOf(home))) {
    log(`handrail: creating the cluster's PostgreSQL data dir ${dataDirOf(home)}`);
    initPostgres(home, s.postgres.user, { sync: true });
  }
  // A crash can leave a stale pid file behind; pg_ctl start copes with that itself.
  startPostgres(home, s.postgres.port);
  return true;
}

export async function withAdmin<T>(
  s: ClusterSettings,
  use: (admin: pg.Client) => Promise<T>,
  database = 'postgres',
): Promise<T> {
  const admin = new pg.Client({ host: s.host, port: s.postgres.port, user: s.postgres.user, database });
  await admin.connect();
  try {
    return await use(admin);
  } finally {
    await admin.end();
  }
}

/** The databases the server and the store need; returns the ones it created. */
export async function ensureDatabases(s: ClusterSettings, names: string[]): Promise<string[]> {
  return withAdmin(s, async (admin) => {
    const created: string[] = [];
    for (const name of names) if (await ensureDatabase(admin, name)) created.push(name);
    return created;
  });
}

/** pg_ctl stop (fast: commits are durable, clients disconnected); false when it was not running. */
export function stopClusterPostgres(s: ClusterSettings): boolean {
  const bin = findPostgresBinDir();
  if (!bin || !fs.existsSync(s.postgres.root)) return false;
  const home: PostgresHome = { bin, root: s.postgres.root };
  return stopPostgres(home, 'fast');
}
