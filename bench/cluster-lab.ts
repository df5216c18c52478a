/**
 * The lab on a cluster of its own (`npm run bench -- --cluster`): the production Temporal server
 * on PostgreSQL for persistence and visibility (docs/cluster.md), on ports of its own, with no
 * handrail workers — the bench starts each side's own. The dev server keeps visibility in
 * SQLite; this measures the same sides where an upsert costs what it costs in production.
 */
import { Client } from '@temporalio/client';
import { handrailDataConverter } from '../src/codec';
import { startOwnCluster } from '../src/devtools/cluster/own-cluster';
import { runningPid } from '../src/devtools/cluster/processes';
import { frontendAddress, type ClusterPorts } from '../src/devtools/cluster/settings';
import { postmasterPid } from '../src/devtools/cluster/status';
import { treeCpuMicros, type Lab } from './lab';

/** Off the default cluster, chaos's and the cluster integration test's. */
const BENCH_CLUSTER_PORTS: ClusterPorts = { postgres: 5733, frontend: 10533, ui: 10633 };

export async function startClusterLab(name: string): Promise<Lab> {
  const cluster = await startOwnCluster({ name, ports: BENCH_CLUSTER_PORTS, workers: false });
  const s = cluster.settings;
  return {
    address: frontendAddress(s),
    tmp: cluster.dataDir,
    client: new Client({
      connection: cluster.connection,
      namespace: s.namespace,
      dataConverter: handrailDataConverter(),
    }),
    restartServer: () => cluster.restartServer(),
    // The server's work is the Temporal server's and PostgreSQL's (its backends are children of the postmaster).
    serverCpuMicros() {
      const [server, postgres] = [runningPid(s.server), postmasterPid(s)];
      const [a, b] = [
        server === undefined ? undefined : treeCpuMicros(server),
        postgres === undefined ? undefined : treeCpuMicros(postgres),
      ];
      return a === undefined || b === undefined ? undefined : a + b;
    },
    stop: () => cluster.down(),
  };
}
