/**
 * What every benchmark command stands on: its own dev server on free loopback ports (never a
 * user's 7233) with a SQLite file in a temp dir, workflow bundles built once, and a client.
 * `stop()` tears down everything the command started, also after a failure, and so do SIGTERM and
 * SIGINT (src/devtools/stop-on-signal.ts; a cluster lab's through `startOwnCluster`).
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { handrailDataConverter } from '../src/codec';
import { codeRoot } from '../src/config';
import { ensureDevServer, freePort, type DevServer } from '../src/devtools/devserver/server';
import { startStoppable } from '../src/devtools/stop-on-signal';
import { bundleRail } from '../src/worker/bundle';
import { BUILT_IN_WORKFLOWS } from '../src/pipelines';

export const NAMESPACE = 'default';

/** The product's workflow bundle (handoffJob, stageHop). */
export const HANDRAIL_WORKFLOWS = path.join(codeRoot, 'workflows', 'index.ts');
/** The bare chain, bundled on its own so it never ships with the product's workflows. */
export const BASELINE_WORKFLOWS = path.join(codeRoot, 'bench', 'baseline', 'workflow.ts');

export interface Lab {
  address: string;
  tmp: string;
  client: Client;
  /** Stops the server (the dev server, or a cluster lab's Temporal server) and starts it again on the same data. */
  restartServer(): Promise<void>;
  /** CPU time the server has used so far (the dev server's process tree; a cluster lab's Temporal
   * server and PostgreSQL), or undefined without /proc. */
  serverCpuMicros(): number | undefined;
  stop(): Promise<void>;
}

export async function startLab(name: string): Promise<Lab> {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), `handrail-${name}-`));
  const dbFile = path.join(tmp, 'temporal.sqlite');
  const logFile = path.join(tmp, 'temporal-server.log');
  let serverOptions = { port: await freePort(), uiPort: await freePort(), dbFile, logFile, log: () => undefined };
  let server: DevServer | undefined;
  let connection: Connection | undefined;
  const { started, stop } = await startStoppable(
    async () => {
      try {
        server = await ensureDevServer(serverOptions);
      } catch (err) {
        // A free port can be taken between freePort and the server's bind (another test's server
        // on a loaded machine): one more start on fresh ports, the first failure's log kept in the error.
        const log = fs.existsSync(logFile)
          ? fs.readFileSync(logFile, 'utf8').trim().split('\n').slice(-3).join(' | ')
          : '';
        serverOptions = { ...serverOptions, port: await freePort(), uiPort: await freePort() };
        try {
          server = await ensureDevServer(serverOptions);
        } catch (again) {
          throw new Error(`${(again as Error).message}; the first start failed too: ${(err as Error).message} ${log}`);
        }
      }
      connection = await Connection.connect({ address: server.address });
      return { address: server.address, connection };
    },
    async () => {
      await connection?.close().catch(() => undefined);
      await server?.stop();
      fs.rmSync(tmp, { recursive: true, force: true });
    },
  );
  // The same codec keys as the workers it serves, which read them from this environment too.
  const client = new Client({
    connection: started.connection,
    namespace: NAMESPACE,
    dataConverter: handrailDataConverter(),
  });
  return {
    address: started.address,
    tmp,
    client,
    async restartServer() {
      await server?.stop();
      server = undefined;
      server = await ensureDevServer(serverOptions);
    },
    serverCpuMicros: () => (server?.process?.pid === undefined ? undefined : treeCpuMicros(server.process.pid)),
    stop,
  };
}

let ticksPerSecond: number | undefined;

/**
 * User + system CPU of a process and all its descendants (the dev server runs under a tether
 * process; PostgreSQL's backends under its postmaster), from /proc/<pid>/stat; undefined where
 * there is no /proc. A descendant that exited counts once its parent in the tree has reaped it
 * (the parent's cutime and cstime); one that exited unreaped, or whose parent left the tree, does not.
 */
export function treeCpuMicros(root: number): number | undefined {
  if (!fs.existsSync('/proc/self/stat')) return undefined;
  ticksPerSecond ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  const stats = new Map<number, { ppid: number; ticks: number }>();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // gone between the listing and the read
    }
    // Fields after the command name, which may itself hold spaces and parentheses.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // utime, stime, then cutime, cstime: the process's own CPU and its reaped children's.
    stats.set(Number(entry), {
      ppid: Number(fields[1]),
      ticks: Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]),
    });
  }
  let ticks = 0;
  for (const [pid, stat] of stats) {
    for (let p: number | undefined = pid; p !== undefined && p > 1; p = stats.get(p)?.ppid) {
      if (p === root) {
        ticks += stat.ticks;
        break;
      }
    }
  }
  return (ticks / ticksPerSecond) * 1e6;
}

/** Bundles a workflows entry once and writes it where worker processes can load it. */
export async function writeBundle(workflowsPath: string, outFile: string): Promise<string> {
  // webpack's bundle stats would bury the tables; warnings still show.
  // The built-in pipelines preloaded as the shipped worker does (for both sides, as always).
  const { code } = await bundleRail(workflowsPath, undefined, BUILT_IN_WORKFLOWS.preloadModules);
  fs.writeFileSync(outFile, code);
  return outFile;
}

/** Ids unique across runs of the same server. */
export function runId(): string {
  return `${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
}

/** A W3C traceparent made by the caller, so the rail keeps it and the baseline uses the same. */
export function newTraceparent(): string {
  return `00-${randomBytes(16).toString('hex')}-${randomBytes(8).toString('hex')}-01`;
}

/** Deterministic randomness for chaos timings: the same seed replays the same schedule. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
