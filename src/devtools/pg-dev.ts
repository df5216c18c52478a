/**
 * A throwaway PostgreSQL cluster for tests and local parity runs: Debian's postgresql binaries
 * (postgres-server.ts), a temp data dir, a free loopback port, trust auth, torn down on stop
 * (or at process exit).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { freePort } from './devserver/server';
import {
  ensureDatabase,
  ensurePostgresBinaries,
  initPostgres,
  makePostgresHome,
  startPostgres,
  stopPostgres,
} from './postgres-server';

const DATABASE = 'handrail';
/** fsync off: a throwaway cluster trades durability for speed (a restart of the process alone
 * loses nothing: the machine's page cache still holds what was written). */
const THROWAWAY = ['fsync=off', 'full_page_writes=off'];

export interface DevPostgres {
  /** `postgresql://handrail@127.0.0.1:<port>/handrail` */
  url: string;
  /** Stops the cluster at once (no shutdown checkpoint, as a crash) and starts it again on its data and port. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

/** Starts a fresh cluster and returns its URL; call stop() to remove it. */
export async function startDevPostgres(): Promise<DevPostgres> {
  const home = makePostgresHome(ensurePostgresBinaries(), fs.mkdtempSync(path.join(os.tmpdir(), 'handrail-pg-')));

  let stopped = false;
  const stopSync = (): void => {
    if (stopped) return;
    stopped = true;
    process.off('exit', stopSync);
    stopPostgres(home, 'immediate');
    fs.rmSync(home.root, { recursive: true, force: true });
  };
  // A test run that dies without calling stop() must not leave a postmaster behind.
  process.on('exit', stopSync);

  try {
    initPostgres(home, DATABASE, { sync: false });
    const port = await startOnFreePort((p) => startPostgres(home, p, THROWAWAY));
    const admin = new pg.Client({ host: '127.0.0.1', port, user: DATABASE, database: 'postgres' });
    await admin.connect();
    try {
      await ensureDatabase(admin, DATABASE);
    } finally {
      await admin.end();
    }
    return {
      url: `postgresql://${DATABASE}@127.0.0.1:${port}/${DATABASE}`,
      restart: async () => {
        stopPostgres(home, 'immediate');
        startPostgres(home, port, THROWAWAY);
      },
      stop: async () => stopSync(),
    };
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
