/**
 * `npm run cluster up|down|status`: a production-shaped Temporal on this machine, no Docker:
 * PostgreSQL, the Temporal server (all services in one process), its Web UI and the handrail
 * worker(s), all on loopback with pids and logs under `<dataDir>/cluster/` (docs/cluster.md).
 */
import { loadConfig } from '../../config';
import { clusterDown, clusterUp } from './lifecycle';
import { clusterEnv, clusterSettings, webUiUrl, type ClusterSettings } from './settings';
import { clusterStatus, statusTable } from './status';

const USAGE = 'usage: npm run cluster up|down|status';
const log = (msg: string) => console.log(msg);

function printEnv(s: ClusterSettings): void {
  const env = Object.entries(clusterEnv(s)).map(([k, v]) => `${k}=${v}`);
  console.log(`\nWeb UI: ${webUiUrl(s)}/namespaces/${s.namespace}/workflows`);
  console.log('Run the CLI (or anything reading src/config.ts) against the cluster with:\n');
  console.log(`  export ${env.join(' \\\n         ')}\n`);
}

async function main(argv: string[]): Promise<number> {
  const s = clusterSettings(loadConfig());
  switch (argv[0]) {
    case 'up':
      await clusterUp(s, log);
      printEnv(s);
      return 0;
    case 'down':
      await clusterDown(s, log);
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
