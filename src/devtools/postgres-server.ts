/**
 * Running Debian's PostgreSQL binaries for handrail's own servers: the throwaway test cluster
 * (pg-dev.ts) and the persistent one under `npm run cluster` (cluster/postgres.ts).
 *
 * PostgreSQL refuses to run as root, so as root the server runs as the `postgres` system user
 * (created by the Debian package). When the binaries are missing and we are root with apt,
 * they are installed first (CI runs on a fresh machine as root).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type pg from 'pg';

const PG_ROOT = '/usr/lib/postgresql';
const SERVER_USER = 'postgres';

/** Newest `/usr/lib/postgresql/<major>/bin` holding initdb and pg_ctl, or null. */
export function findPostgresBinDir(): string | null {
  if (!fs.existsSync(PG_ROOT)) return null;
  const majors = fs
    .readdirSync(PG_ROOT)
    .filter((v) => /^\d+$/.test(v))
    .sort((a, b) => Number(b) - Number(a));
  for (const major of majors) {
    const bin = path.join(PG_ROOT, major, 'bin');
    if (['initdb', 'pg_ctl', 'postgres'].every((tool) => fs.existsSync(path.join(bin, tool)))) return bin;
  }
  return null;
}

const isRoot = (): boolean => process.getuid?.() === 0;

/** The bin dir, installing Debian's `postgresql` via apt when missing and allowed. Quiet when
 * already installed; throws with the reason (and apt's output) when it cannot be had. */
export function ensurePostgresBinaries(): string {
  const found = findPostgresBinDir();
  if (found) return found;
  if (!isRoot())
    throw new Error(`PostgreSQL binaries not found under ${PG_ROOT} and not root: install the "postgresql" package`);
  if (spawnSync('apt-get', ['--version'], { stdio: 'ignore' }).status !== 0) {
    throw new Error(`PostgreSQL binaries not found under ${PG_ROOT} and apt-get is unavailable`);
  }
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  for (const args of [
    ['update', '-qq'],
    ['install', '-y', '-qq', '--no-install-recommends', 'postgresql'],
  ]) {
    const run = spawnSync('apt-get', args, { env, encoding: 'utf8' });
    if (run.status !== 0) throw new Error(`apt-get ${args.join(' ')} failed:\n${run.stdout}${run.stderr}`);
  }
  const installed = findPostgresBinDir();
  if (!installed) throw new Error(`apt-get installed postgresql but no binaries appeared under ${PG_ROOT}`);
  return installed;
}

/** One PostgreSQL server: its binaries and the folder holding its data dir, log and socket. */
export interface PostgresHome {
  bin: string;
  /** Owned by the server user when root; `data/` and `server.log` live in it. */
  root: string;
}

export const dataDirOf = (home: PostgresHome): string => path.join(home.root, 'data');
export const logFileOf = (home: PostgresHome): string => path.join(home.root, 'server.log');

/** Runs initdb/pg_ctl/… from the bin dir, as the server user when root; throws with its output on failure. */
export function runPgTool(home: PostgresHome, tool: string, args: string[]): void {
  const exe = path.join(home.bin, tool);
  const [command, argv] = isRoot() ? ['runuser', ['-u', SERVER_USER, '--', exe, ...args]] : [exe, args];
  const run = spawnSync(command, argv, { encoding: 'utf8', cwd: home.root });
  if (run.status !== 0)
    throw new Error(`${tool} ${args.join(' ')} failed (exit ${run.status}):\n${run.stdout}${run.stderr}`);
}

/** Creates the home folder (owned by the server user when root, who must write into it). */
export function makePostgresHome(bin: string, root: string): PostgresHome {
  fs.mkdirSync(root, { recursive: true });
  if (isRoot()) {
    const uid = Number(execFileSync('id', ['-u', SERVER_USER], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', SERVER_USER], { encoding: 'utf8' }).trim());
    fs.chownSync(root, uid, gid);
  }
  return { bin, root };
}

/** initdb with trust auth (loopback only, see startPostgres) and `superuser` as the only role. */
export function initPostgres(home: PostgresHome, superuser: string, opts: { sync: boolean }): void {
  runPgTool(home, 'initdb', [
    '-D',
    dataDirOf(home),
    '-U',
    superuser,
    '-A',
    'trust',
    '-E',
    'UTF8',
    '--no-locale',
    ...(opts.sync ? [] : ['--no-sync']),
  ]);
}

/** pg_ctl start, waiting until it accepts connections. Listens on 127.0.0.1 only; the socket
 * lives in the home folder so nothing is written to /var/run. */
export function startPostgres(home: PostgresHome, port: number, extraSettings: string[] = []): void {
  const options = [
    `-p ${port}`,
    `-k ${home.root}`,
    '-c listen_addresses=127.0.0.1',
    ...extraSettings.map((s) => `-c ${s}`),
  ].join(' ');
  runPgTool(home, 'pg_ctl', ['-D', dataDirOf(home), '-l', logFileOf(home), '-w', '-t', '60', 'start', '-o', options]);
}

/** pg_ctl stop when a postmaster.pid says it may be running; true when it stopped one. */
export function stopPostgres(home: PostgresHome, mode: 'fast' | 'immediate'): boolean {
  if (!fs.existsSync(path.join(dataDirOf(home), 'postmaster.pid'))) return false;
  try {
    runPgTool(home, 'pg_ctl', ['-D', dataDirOf(home), '-m', mode, '-w', 'stop']);
    return true;
  } catch {
    // A stale postmaster.pid (server already gone): nothing left to stop.
    return false;
  }
}

/** CREATE DATABASE unless it exists (PostgreSQL has no IF NOT EXISTS for databases). */
export async function ensureDatabase(admin: pg.Client, name: string): Promise<boolean> {
  const { rowCount } = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
  if (rowCount) return false;
  await admin.query(`CREATE DATABASE "${name}"`);
  return true;
}
