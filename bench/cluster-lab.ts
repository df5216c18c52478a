/**
 * The lab on a cluster of its own (`npm run bench -- --cluster`): the production Temporal server
 * on PostgreSQL for persistence and visibility (docs/cluster.md), on ports of its own, with no
 * handrail workers — the bench starts each side's own. The dev server keeps visibility in
 * SQLite; this measures the same sides where an upsert costs what it costs in production.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { handrailDataConverter } from '../src/codec';
import { loadConfig } from '../src/config';
import { ensureClusterBinaries } from '../src/devtools/cluster/binaries';
import { clusterDown, clusterUp, takenPort } from '../src/devtools/cluster/lifecycle';
import { runningPid, stopDaemon } from '../src/devtools/cluster/processes';
import { clusterSettings, frontendAddress, type ClusterPorts } from '../src/devtools/cluster/settings';
import { prepareNamespace, startTemporalServer } from '../src/devtools/cluster/temporal-server';
import { treeCpuMicros, type Lab } from './lab';

/** Off the default cluster, chaos's and the cluster integration test's. */
const BENCH_CLUSTER_PORTS: ClusterPorts = { postgres: 5733, frontend: 10533, ui: 10633 };

export async function startClusterLab(name: string): Promise<Lab> {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), `handrail-${name}-cluster-`));
  // Run as root, PostgreSQL runs as `postgres`, who must reach its data dir below mkdtemp's 0700.
  fs.chmodSync(tmp, 0o755);
  const s = { ...clusterSettings(loadConfig({ HANDRAIL_DATA_DIR: tmp }), BENCH_CLUSTER_PORTS), workers: [] };
  /** Tears the cluster down and removes its data, whatever the teardown throws. */
  const down = async () => {
    try {
      await clusterDown(s, () => undefined);
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  };
  let connection: Connection | undefined;
  let bins: ReturnType<typeof ensureClusterBinaries>;
  try {
    bins = ensureClusterBinaries(process.env, () => undefined);
    const taken = await takenPort(s, bins);
    if (taken !== undefined) throw new Error(`port ${s.host}:${taken} is taken; the bench's cluster needs its own ports`);
    await clusterUp(s, () => undefined);
    connection = await Connection.connect({ address: frontendAddress(s) });
  } catch (err) {
    await connection?.close().catch(() => undefined);
    // Nothing of ours listens when a port was taken: the teardown only finds parts not running.
    await down().catch(() => undefined);
    throw err;
  }
  const open = connection;
  const postmaster = (): number | undefined => {
    try {
      return Number(fs.readFileSync(path.join(s.postgres.root, 'data', 'postmaster.pid'), 'utf8').split('\n')[0]);
    } catch {
      return undefined;
    }
  };
  return {
    address: frontendAddress(s),
    tmp,
    client: new Client({ connection: open, namespace: s.namespace, dataConverter: handrailDataConverter() }),
    async restartServer() {
      await stopDaemon(s.server);
      startTemporalServer(s, bins);
      await prepareNamespace(s, () => undefined);
    },
    // The server's work is the Temporal server's and PostgreSQL's (its backends are children of the postmaster).
    serverCpuMicros() {
      const [server, postgres] = [runningPid(s.server), postmaster()];
      const [a, b] = [server === undefined ? undefined : treeCpuMicros(server), postgres === undefined ? undefined : treeCpuMicros(postgres)];
      return a === undefined || b === undefined ? undefined : a + b;
    },
    async stop() {
      await open.close().catch(() => undefined);
      await down();
    },
  };
}
