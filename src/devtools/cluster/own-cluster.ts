/**
 * A cluster of a harness's own (`npm run bench -- --cluster`, `npm run chaos -- --cluster`): a
 * temp data dir and ports off everyone else's. It refuses to start where one of its ports is
 * taken (it never touches another cluster), and `down` removes the data whatever a step throws.
 * A SIGTERM or SIGINT takes it down as well (src/devtools/stop-on-signal.ts), then ends the process.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { loadConfig } from '../../config';
import { ensureClusterBinaries } from './binaries';
import { clusterDown, clusterUp, takenPort } from './lifecycle';
import { startStoppable } from '../stop-on-signal';
import { stopDaemon } from './processes';
import { clusterSettings, frontendAddress, type ClusterPorts, type ClusterSettings } from './settings';
import { prepareNamespace, startTemporalServer } from './temporal-server';

export interface OwnClusterOptions {
  /** Names the data dir (`handrail-<name>-cluster-…`) and the error when a port is taken. */
  name: string;
  ports: ClusterPorts;
  /** Start the cluster's own handrail workers (general and writer); without them the harness starts its own. */
  workers: boolean;
  log?: (msg: string) => void;
}

export interface OwnCluster {
  /** The temp dir everything lives under (removed by `down`); the harness may put its own files there. */
  dataDir: string;
  settings: ClusterSettings;
  connection: Connection;
  /** Stops the Temporal server and starts it again on the same data. */
  restartServer(): Promise<void>;
  /** Closes the connection, stops every part and removes the data dir (once, whoever asks first). */
  down(): Promise<void>;
}

export async function startOwnCluster(o: OwnClusterOptions): Promise<OwnCluster> {
  const log = o.log ?? (() => undefined);
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), `handrail-${o.name}-cluster-`));
  // What `down` stops, once the settings exist.
  let toStop: ClusterSettings | undefined;
  let connection: Connection | undefined;
  // Down on SIGTERM and SIGINT too: its parts run detached and would outlive the harness.
  const { started, stop } = await startStoppable(
    async () => {
      // Run as root, PostgreSQL runs as `postgres`, who must reach its data dir below mkdtemp's 0700.
      fs.chmodSync(tmp, 0o755);
      const settings = clusterSettings(loadConfig({ HANDRAIL_DATA_DIR: tmp }), o.ports);
      const s = o.workers ? settings : { ...settings, workers: [] };
      toStop = s;
      const bins = ensureClusterBinaries(process.env, log);
      const taken = await takenPort(s, bins);
      // Nothing of ours listens when a port was taken: the teardown only finds parts not running.
      if (taken !== undefined)
        throw new Error(`port ${s.host}:${taken} is taken; the ${o.name} cluster needs its own ports`);
      await clusterUp(s, () => undefined);
      log(`cluster up at ${frontendAddress(s)} (data ${s.root})`);
      connection = await Connection.connect({ address: frontendAddress(s) });
      return { s, bins, connection };
    },
    async () => {
      try {
        await connection?.close().catch(() => undefined);
        if (toStop) await clusterDown(toStop, () => undefined);
      } finally {
        fs.rmSync(tmp, { recursive: true, force: true });
      }
    },
  );
  const { s, bins } = started;
  return {
    dataDir: tmp,
    settings: s,
    connection: started.connection,
    async restartServer() {
      await stopDaemon(s.server);
      startTemporalServer(s, bins);
      await prepareNamespace(s, () => undefined);
    },
    down: stop,
  };
}
