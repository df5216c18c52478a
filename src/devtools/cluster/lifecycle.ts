/**
 * Bringing the cluster up and down: what `npm run cluster up|down` does, callable with any
 * settings (a test runs its own cluster on its own ports and data dir).
 */
import fs from 'node:fs';
import path from 'node:path';
import { portOpen } from '../devserver/server';
import { SERVER_MODULE_FILES, ensureClusterBinaries, type ClusterBinaries } from './binaries';
import { ensureDatabases, ensurePostgres, stopClusterPostgres } from './postgres';
import { stopDaemon } from './processes';
import { clusterEnv, type ClusterSettings } from './settings';
import { clusterStatus, statusTable, type PartStatus } from './status';
import { listenPorts } from './server-config';
import {
  TEMPORAL_DATABASES,
  applySchemas,
  prepareNamespace,
  startTemporalServer,
  temporalServerUp,
  writeServerConfig,
} from './temporal-server';
import { startUiServer, uiServerUp } from './ui-server';
import { startWorker, workerEnv, workerUp } from './workers';

const seconds = (since: number) => `${((Date.now() - since) / 1000).toFixed(1)} s`;

/** A port this cluster would listen on that something already holds, or undefined: a second
 * cluster (a test's, chaos's) checks before `clusterUp` rather than meet another one's processes. */
export async function takenPort(s: ClusterSettings, bins: ClusterBinaries): Promise<number | undefined> {
  const template = fs.readFileSync(path.join(bins.serverModule, SERVER_MODULE_FILES.config), 'utf8');
  for (const port of [s.postgres.port, s.ui.port, ...listenPorts(template).map((p) => p + s.server.portOffset)]) {
    if (await portOpen(s.host, port)) return port;
  }
  return undefined;
}

/** Starts what is not running; returns the parts' status once all are up. */
export async function clusterUp(s: ClusterSettings, log: (msg: string) => void): Promise<PartStatus[]> {
  const started = Date.now();
  const before = await clusterStatus(s);
  if (before.every((p) => p.up)) {
    log(`The cluster is already up:\n\n${statusTable(before)}`);
    return before;
  }
  fs.mkdirSync(s.root, { recursive: true });
  const bins = ensureClusterBinaries(process.env, log);
  log(`PostgreSQL ${s.host}:${s.postgres.port}: ${(await ensurePostgres(s, log)) ? 'started' : 'already running'}`);
  const created = await ensureDatabases(s, [...TEMPORAL_DATABASES, s.postgres.storeDatabase, s.postgres.crmDatabase]);
  if (created.length) log(`created databases ${created.join(', ')}`);
  if (!(await temporalServerUp(s))) {
    // Stale or half-started (pid there, frontend silent): replace it.
    await stopDaemon(s.server);
    await applySchemas(s, bins, log);
    writeServerConfig(s, bins);
    startTemporalServer(s, bins);
    log(`Temporal server starting (config ${s.server.configDir}, log ${s.server.logFile}) ...`);
  }
  await prepareNamespace(s, log);
  if (!(await uiServerUp(s))) {
    await stopDaemon(s.ui);
    await startUiServer(s, bins);
  }
  for (const worker of s.workers) {
    if (workerUp(worker)) continue;
    log(`starting ${worker.name} (${worker.script}, role ${worker.role}, log ${worker.logFile}) ...`);
    await startWorker(worker, workerEnv(clusterEnv(s), worker));
  }
  const after = await clusterStatus(s);
  log(`\nThe cluster is up (${seconds(started)}):\n\n${statusTable(after)}`);
  return after;
}

/** Stops in reverse dependency order; every step tolerates a part that is not running. */
export async function clusterDown(s: ClusterSettings, log: (msg: string) => void): Promise<void> {
  const started = Date.now();
  const report = (part: string, pid: number | undefined) =>
    log(pid === undefined ? `${part}: not running` : `${part}: stopped (pid ${pid})`);
  for (const worker of [...s.workers].reverse()) report(worker.name, await stopDaemon(worker));
  report('ui-server', await stopDaemon(s.ui));
  report('temporal-server', await stopDaemon(s.server));
  log(`postgresql: ${stopClusterPostgres(s) ? 'stopped' : 'not running'}`);
  log(`The cluster is down (${seconds(started)}). Data stays in ${s.root}.`);
}
