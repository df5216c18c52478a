/**
 * `npm run rollout [-- --routes patching,pinned,pinned-v1-retired,auto-upgrade --human-delay-ms 5000 --settle-ms 30000 --json]`:
 * one workflow change (v2 adds a `rerank` stage) rolled out on a cluster of its own, by patching
 * and by Worker Deployment Versioning (bench/rollout-run.ts); a table of what each job went
 * through. docs/cluster.md "Rolling out workflow changes" reads it.
 */
import { parseArgs } from 'node:util';
import { startOwnCluster } from '../src/devtools/cluster/own-cluster';
import { frontendAddress, storeUrl, type ClusterPorts } from '../src/devtools/cluster/settings';
import { openStore } from '../src/worker/store';
import { fmt, markdownTable, printReport, runMain } from './report';
import { bundleBuilds, connectClient, runRoute, type RouteName, type RouteOutcome } from './rollout-run';

const { values: args } = parseArgs({
  options: {
    routes: { type: 'string', default: 'patching,pinned,pinned-v1-retired,auto-upgrade' },
    'human-delay-ms': { type: 'string', default: '5000' },
    'settle-ms': { type: 'string', default: '30000' },
    json: { type: 'boolean' },
    // Accepted for symmetry with the other benches: this one always runs on a cluster of its own.
    cluster: { type: 'boolean', default: true },
  },
});

/** Off every other cluster: the default one, the integration test's, chaos's and the bench's. */
const ROLLOUT_CLUSTER_PORTS: ClusterPorts = { postgres: 5833, frontend: 10733, ui: 10833 };

const ROUTES: Record<string, RouteName> = {
  patching: 'patching',
  pinned: 'pinned',
  'pinned-v1-retired': 'pinned, v1 retired at once',
  'auto-upgrade': 'auto-upgrade',
};
function usage(route: string): never {
  throw new Error(`unknown route "${route}"; the routes are ${Object.keys(ROUTES).join(', ')}`);
}

const log = (msg: string) => console.error(`rollout: ${msg}`);

async function main(): Promise<boolean> {
  const routes = args.routes.split(',').map((r) => ROUTES[r as keyof typeof ROUTES] ?? usage(r));
  const started = Date.now();
  const cluster = await startOwnCluster({ name: 'rollout', ports: ROLLOUT_CLUSTER_PORTS, workers: false, log });
  const s = cluster.settings;
  const store = await openStore({ databaseUrl: storeUrl(s) });
  const client = await connectClient(frontendAddress(s), s.namespace);
  const outcomes: RouteOutcome[] = [];
  try {
    const builds = await bundleBuilds();
    log(`three builds bundled (${fmt((Date.now() - started) / 1000)} s since start)`);
    const env = {
      address: frontendAddress(s),
      namespace: s.namespace,
      client,
      store,
      humanDelayMs: Number(args['human-delay-ms']),
      settleMs: Number(args['settle-ms']),
      log,
    };
    for (const route of routes) outcomes.push(await runRoute(env, route, builds));
  } finally {
    await client.connection.close();
    await store.close();
    await cluster.down();
  }
  const report = { seconds: (Date.now() - started) / 1000, human_delay_ms: Number(args['human-delay-ms']), outcomes };
  printReport('rollout', report, Boolean(args.json), () => rolloutTables(report.outcomes));
  // Only the two routes handrail documents must finish every job; the other two show how they fail.
  return outcomes.every(
    (o) => !['patching', 'pinned'].includes(o.route) || o.jobs.every((j) => j.status === 'completed'),
  );
}

function rolloutTables(outcomes: readonly RouteOutcome[]): string {
  const jobs = markdownTable(
    [
      'route',
      'job',
      'status',
      'new path (rerank)',
      'runs',
      'workflow tasks by build (→ continue-as-new)',
      'events',
      'NDE task failures',
      'patch markers',
      'target-version-changed seen',
    ],
    outcomes.flatMap((o) =>
      o.jobs.map((j) => [
        o.route,
        j.kind,
        j.status,
        j.reranked ? 'yes' : 'no',
        j.runs,
        j.builds,
        j.events,
        j.nondeterminism,
        j.patchMarkers,
        j.targetChanged,
      ]),
    ),
  );
  const routes = markdownTable(
    ['route', 'completed', 'NDE task failures', 'v1 polled after v2 arrived (s)', 'stopping v1 took (s)'],
    outcomes.map((o) => [
      o.route,
      `${o.jobs.filter((j) => j.status === 'completed').length}/${o.jobs.length}`,
      o.jobs.reduce((n, j) => n + j.nondeterminism, 0),
      fmt(o.v1NeededMs / 1000),
      fmt(o.v1StopMs / 1000),
    ]),
  );
  return `\n## Rollout: one workflow change (v2 adds rerank), ${outcomes.length} routes\n\n${routes}\n\n${jobs}\n`;
}

runMain(main);
