/**
 * A throwaway PostgreSQL cluster for tests and local parity runs: Debian's postgresql binaries,
 * a temp data dir, a free loopback port, trust auth, torn down on stop (or at process exit).
 *
 * PostgreSQL refuses to run as root, so as root the server runs as the `postgres` system user
 * (created by the Debian package). When the binaries are missing and we are root with apt,
 * they are installed first (CI runs on a fresh machine as root).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { freePort } from './devserver/server';

const PG_ROOT = '/usr/lib/postgresql';
const SERVER_USER = 'postgres';
const DATABASE = 'handrail';

export interface DevPostgres {
  /** `postgresql://handrail@127.0.0.1:<port>/handrail` */
  url: string;
  stop(): Promise<void>;
}

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
  if (!isRoot()) throw new Error(`PostgreSQL binaries not found under ${PG_ROOT} and not root: install the "postgresql" package`);
  if (spawnSync('apt-get', ['--version'], { stdio: 'ignore' }).status !== 0) {
    throw new Error(`PostgreSQL binaries not found under ${PG_ROOT} and apt-get is unavailable`);
  }
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  for (const args of [['update', '-qq'], ['install', '-y', '-qq', '--no-install-recommends', 'postgresql']]) {
    const run = spawnSync('apt-get', args, { env, encoding: 'utf8' });
    if (run.status !== 0) throw new Error(`apt-get ${args.join(' ')} failed:\n${run.stdout}${run.stderr}`);
  }
  const installed = findPostgresBinDir();
  if (!installed) throw new Error(`apt-get installed postgresql but no binaries appeared under ${PG_ROOT}`);
  return installed;
}

/** Starts a fresh cluster and returns its URL; call stop() to remove it. */
export async function startDevPostgres(): Promise<DevPostgres> {
  const bin = ensurePostgresBinaries();
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'handrail-pg-'));
  const dataDir = path.join(root, 'data');
  const asServerUser = (tool: string, args: string[]): void => {
    const [command, argv] = isRoot() ? ['runuser', ['-u', SERVER_USER, '--', path.join(bin, tool), ...args]] : [path.join(bin, tool), args];
    const run = spawnSync(command, argv as string[], { encoding: 'utf8', cwd: root });
    if (run.status !== 0) throw new Error(`${tool} ${args.join(' ')} failed (exit ${run.status}):\n${run.stdout}${run.stderr}`);
  };
  if (isRoot()) {
    const uid = Number(execFileSync('id', ['-u', SERVER_USER], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', SERVER_USER], { encoding: 'utf8' }).trim());
    fs.chownSync(root, uid, gid);
  }

  let stopped = false;
  const stopSync = (): void => {
    if (stopped) return;
    stopped = true;
    process.off('exit', stopSync);
    if (fs.existsSync(path.join(dataDir, 'postmaster.pid'))) {
      try {
        asServerUser('pg_ctl', ['-D', dataDir, '-m', 'immediate', '-w', 'stop']);
      } catch {
        // Already gone: nothing left to stop; the directory is removed below either way.
      }
    }
    fs.rmSync(root, { recursive: true, force: true });
  };
  // A test run that dies without calling stop() must not leave a postmaster behind.
  process.on('exit', stopSync);

  try {
    asServerUser('initdb', ['-D', dataDir, '-U', DATABASE, '-A', 'trust', '-E', 'UTF8', '--no-locale', '--no-sync']);
    const port = await startOnFreePort((p) =>
      asServerUser('pg_ctl', [
        '-D', dataDir, '-l', path.join(root, 'server.log'), '-w', '-t', '60', 'start',
        // fsync off: a throwaway cluster trades durability for speed. The socket lives in the
        // temp dir so nothing is written to /var/run.
        '-o', `-p ${p} -k ${root} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off`,
      ]),
    );
    const admin = new pg.Client({ host: '127.0.0.1', port, user: DATABASE, database: 'postgres' });
    await admin.connect();
    try {
      await admin.query(`CREATE DATABASE ${DATABASE}`);
    } finally {
      await admin.end();
    }
    return { url: `postgresql://${DATABASE}@127.0.0.1:${port}/${DATABASE}`, stop: async () => stopSync() };
  } catch (error) {
    stopSync();
    throw error;
  }
}

/** Another process can take a port between our probe and the server's bind: try a few. */
async function startOnFreePort(start: (port: number) => void, attempts = 3): Promise<number> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    try {
      start(port);
      return port;
    } catch (error) {
      if (attempt >= attempts) throw error;
    }
  }
}

/** `tsx src/devtools/pg-dev.ts`: a throwaway cluster for manual parity runs; prints its DATABASE_URL. */
if (require.main === module) {
  startDevPostgres()
    .then((server) => {
      console.log(`DATABASE_URL=${server.url}`);
      console.log('throwaway PostgreSQL running; Ctrl-C stops and removes it.');
      // The postmaster is not our child and signal listeners hold no handle: without a timer
      // the event loop empties, the process exits and the exit hook removes the cluster.
      const keepAlive = setInterval(() => undefined, 2 ** 31 - 1);
      const stop = () => {
        clearInterval(keepAlive);
        void server.stop().then(() => process.exit(0));
      };
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    })
    .catch((err: Error) => {
      console.error(err.message);
      process.exit(1);
    });
}
