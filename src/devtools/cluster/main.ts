/**
 * `npm run cluster up|down|status`: a production-shaped Temporal on this machine, no Docker:
 * PostgreSQL, the Temporal server (all services in one process), its Web UI and the handrail
 * worker(s), all on loopback with pids and logs under `<dataDir>/cluster/` (docs/cluster.md).
 */
import fs from 'node:fs';
import { loadConfig } from '../../config';
import { ensureClusterBinaries } from './binaries';
import { ensureDatabases, ensurePostgres, stopClusterPostgres } from './postgres';
import { stopDaemon } from './processes';
import { clusterEnv, clusterSettings, webUiUrl, type ClusterSettings } from './settings';
import { clusterStatus, statusTable } from './status';
import { TEMPORAL_DATABASES, applySchemas, prepareNamespace, startTemporalServer, temporalServerUp, writeServerConfig } from './temporal-server';
import { startUiServer, uiServerUp } from './ui-server';
import { startWorker, workerUp } from './workers';

const USAGE = 'usage: npm run cluster up|down|status';
const log = (msg: string) => console.log(msg);
const seconds = (since: number) => `${((Date.now() - since) / 1000).toFixed(1)} s`;

function printEnv(s: ClusterSettings): void {
  const env = Object.entries(clusterEnv(s)).map(([k, v]) => `${k}=${v}`);
  console.log(`\nWeb UI: ${webUiUrl(s)}/namespaces/${s.namespace}/workflows`);
  console.log('Run the CLI (or anything reading src/config.ts) against the cluster with:\n');
  console.log(`  export ${env.join(' \\\n         ')}\n`);
}

async function up(s: ClusterSettings): Promise<void> {
  const started = Date.now();
  const before = await clusterStatus(s);
  if (before.every((p) => p.up)) {
    console.log(`The cluster is already up:\n\n${statusTable(before)}`);
    printEnv(s);
    return;
  }
  fs.mkdirSync(s.root, { recursive: true });
  const bins = ensureClusterBinaries(process.env, log);
  log(`PostgreSQL ${s.host}:${s.postgres.port}: ${(await ensurePostgres(s, log)) ? 'started' : 'already running'}`);
  const created = await ensureDatabases(s, [...TEMPORAL_DATABASES, s.postgres.storeDatabase]);
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
    log(`starting ${worker.name} (${worker.script}, log ${worker.logFile}) ...`);
    await startWorker(s, worker);
  }
  console.log(`\nThe cluster is up (${seconds(started)}):\n\n${statusTable(await clusterStatus(s))}`);
  printEnv(s);
}

/** Stops in reverse dependency order; every step tolerates a part that is not running. */
async function down(s: ClusterSettings): Promise<void> {
  const started = Date.now();
  const report = (part: string, pid: number | undefined) => log(pid === undefined ? `${part}: not running` : `${part}: stopped (pid ${pid})`);
  for (const worker of [...s.workers].reverse()) report(worker.name, await stopDaemon(worker));
  report('ui-server', await stopDaemon(s.ui));
  report('temporal-server', await stopDaemon(s.server));
  log(`postgresql: ${stopClusterPostgres(s) ? 'stopped' : 'not running'}`);
  log(`The cluster is down (${seconds(started)}). Data stays in ${s.root}.`);
}

async function main(argv: string[]): Promise<number> {
  const s = clusterSettings(loadConfig());
  switch (argv[0]) {
    case 'up':
      await up(s);
      return 0;
    case 'down':
      await down(s);
      return 0;
    case 'status': {
      const parts = await clusterStatus(s);
      console.log(statusTable(parts));
      // Scripts can branch on it: 0 only when every part answers.
      return parts.every((p) => p.up) ? 0 : 1;
    }
    default:
      console.error(USAGE);
      return 2;
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: Error) => {
    console.error(err.message);
    process.exit(1);
  },
);
