/**
 * Starts (or reuses) a local Temporal dev server: SQLite file, Web UI, and handrail's
 * search attributes registered.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import type { Connection } from '@temporalio/client';
import { connectClient } from '../../connect';
import { SEARCH_ATTRIBUTES } from '../../../workflows/search-attributes';
import { resolveTemporalCli } from './temporal-cli';

export interface DevServerOptions {
  host?: string;
  port: number;
  uiPort: number;
  /** SQLite file; undefined keeps history in memory (tests). */
  dbFile?: string;
  namespace?: string;
  /** Where the server's own log goes; stdout/stderr are inherited when unset. */
  logFile?: string;
  /** Keep the server alive after this process exits (the demo leaves it up for the Web UI). */
  detached?: boolean;
  /** Where a detached server's pid goes, for `npm run server:stop`. */
  pidFile?: string;
  /** A codec server the Web UI decodes payloads through (`--ui-codec-endpoint`, docs/codec.md). */
  codecEndpoint?: string;
  log?: (msg: string) => void;
}

export interface DevServer {
  address: string;
  webUiUrl: string;
  /** False when an already running server was reused. */
  startedHere: boolean;
  process?: ChildProcess;
  stop(): Promise<void>;
}

/** Whether something accepts TCP connections there. */
export function portOpen(host: string, port: number, timeoutMs = 500): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (open: boolean) => {
      socket.destroy();
      resolve(open);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/** A free TCP port on loopback, for test servers that must not collide with a user's 7233. */
export function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, host, () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

/** Adds any missing handrail search attribute (for servers we did not start ourselves). */
export async function registerSearchAttributes(connection: Connection, namespace: string): Promise<string[]> {
  const existing = await connection.operatorService.listSearchAttributes({ namespace });
  const known = new Set(Object.keys(existing.customAttributes ?? {}));
  const typeIds = { Keyword: 2, Int: 3, Double: 4, KeywordList: 7 } as const; // temporal.api.enums.v1.IndexedValueType
  const missing = Object.entries(SEARCH_ATTRIBUTES).filter(([name]) => !known.has(name));
  if (missing.length === 0) return [];
  await connection.operatorService.addSearchAttributes({
    namespace,
    searchAttributes: Object.fromEntries(missing.map(([name, type]) => [name, typeIds[type]])),
  });
  return missing.map(([name]) => name);
}

async function waitHealthy(
  address: string,
  namespace: string,
  child: ChildProcess | undefined,
  timeoutMs: number,
): Promise<Connection> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    if (child && (child.exitCode !== null || child.signalCode !== null))
      throw new Error(`temporal server exited early (${child.signalCode ?? `code ${child.exitCode}`})`);
    try {
      return await connectClient({ temporalAddress: address, namespace }, 2_000);
    } catch (err) {
      lastError = err;
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  throw new Error(
    `temporal server at ${address} did not become healthy within ${timeoutMs / 1000}s: ${String(lastError)}`,
  );
}

/** How long the tether waits for a stopping server before it kills it. */
const TETHER_KILL_MS = 10_000;

/**
 * A server that is not detached ends with the process that started it, however that one ends: a
 * killed `npm test` or bench must not leave its server running. Node cannot ask Linux to signal a
 * child when its parent dies, so a small Node process stands between them. It reads a pipe from
 * the parent, which closes when the parent exits (SIGKILL included), and then stops the server.
 * SIGTERM it passes on; SIGINT it ignores, since Ctrl-C reaches the server from the terminal
 * already. A server still up 10 s after that is killed (what `stop()` allowed it before), and the
 * tether ends as the server did, its signal included.
 */
const TETHER = `
const { spawn } = require('node:child_process');
const [command, ...args] = process.argv.slice(1);
const server = spawn(command, args, { stdio: ['ignore', 'inherit', 'inherit'] });
let kill;
const stop = () => {
  if (server.exitCode !== null || server.signalCode !== null) return;
  server.kill('SIGTERM');
  kill ??= setTimeout(() => server.kill('SIGKILL'), ${TETHER_KILL_MS});
};
process.stdin.on('end', stop).on('error', stop).resume();
process.on('SIGTERM', stop);
process.on('SIGINT', () => undefined);
server.on('error', (err) => { console.error(err.message); process.exit(1); });
server.on('exit', (code, signal) => {
  if (signal === null) process.exit(code ?? 1);
  process.removeAllListeners(signal);
  process.kill(process.pid, signal);
});
`;

/** Starts a dev server, or reuses a healthy one already listening on the port. */
export async function ensureDevServer(opts: DevServerOptions): Promise<DevServer> {
  const host = opts.host ?? '127.0.0.1';
  const namespace = opts.namespace ?? 'default';
  const address = `${host}:${opts.port}`;
  const webUiUrl = `http://localhost:${opts.uiPort}`;
  const log = opts.log ?? ((m: string) => console.error(m));

  if (await portOpen(host, opts.port)) {
    // Something listens: reuse it only if it really is a Temporal frontend.
    const connection = await waitHealthy(address, namespace, undefined, 5_000);
    const added = await registerSearchAttributes(connection, namespace);
    await connection.close();
    log(
      `handrail: reusing the Temporal server already running at ${address}${added.length ? ` (registered ${added.join(', ')})` : ''}`,
    );
    // Its Web UI keeps the codec endpoint it was started with, if any.
    if (opts.codecEndpoint)
      log(
        `handrail: if its Web UI shows encrypted payloads, restart it (npm run server:stop) or set ${opts.codecEndpoint} in the UI's codec server setting (docs/codec.md)`,
      );
    return { address, webUiUrl, startedHere: false, stop: async () => undefined };
  }

  const cli = await resolveTemporalCli({ log });
  const args = [
    'server',
    'start-dev',
    '--ip',
    host,
    '--port',
    String(opts.port),
    '--ui-port',
    String(opts.uiPort),
    '--namespace',
    namespace,
    '--log-level',
    'warn',
  ];
  if (opts.dbFile) {
    fs.mkdirSync(path.dirname(opts.dbFile), { recursive: true });
    args.push('--db-filename', opts.dbFile);
  }
  for (const [name, type] of Object.entries(SEARCH_ATTRIBUTES)) args.push('--search-attribute', `${name}=${type}`);
  if (opts.codecEndpoint) args.push('--ui-codec-endpoint', opts.codecEndpoint);

  let out: 'inherit' | number = 'inherit';
  if (opts.logFile) {
    fs.mkdirSync(path.dirname(opts.logFile), { recursive: true });
    out = fs.openSync(opts.logFile, 'a');
  }
  let child: ChildProcess;
  if (opts.detached) {
    child = spawn(cli.path, args, { stdio: ['ignore', out, out], detached: true });
    child.unref();
    if (opts.pidFile && child.pid) fs.writeFileSync(opts.pidFile, String(child.pid));
  } else {
    // The pipe is the tether: it stays open for as long as this process lives.
    child = spawn(process.execPath, ['-e', TETHER, cli.path, ...args], {
      stdio: ['pipe', out, out],
      env: { ...process.env, NODE_OPTIONS: '' },
    });
    child.stdin?.on('error', () => undefined);
  }

  try {
    const connection = await waitHealthy(address, namespace, child, 60_000);
    // A server started on an older SQLite file keeps the attributes it had; add any new ones.
    await registerSearchAttributes(connection, namespace);
    await connection.close();
  } catch (err) {
    child.kill('SIGTERM');
    const hint = opts.logFile ? ` (see ${opts.logFile})` : '';
    throw new Error(`${(err as Error).message}${hint}`);
  }

  return {
    address,
    webUiUrl,
    startedHere: true,
    process: child,
    // The tether kills a server that outstays TETHER_KILL_MS itself; this waits a little longer for it.
    stop: () => stopProcess(child, opts.detached ? undefined : TETHER_KILL_MS + 5_000),
  };
}

function stopProcess(child: ChildProcess, graceMs = 10_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}
