/**
 * Where `npm run cluster` puts everything and which ports it uses. Fixed ports, one documented
 * base per part, all off the dev server's 7233/8233 so both can run side by side
 * (docs/cluster.md lists them).
 */
import path from 'node:path';
import { PROJECT_ROOT, type HandrailConfig } from '../../config';

export const CLUSTER_HOST = '127.0.0.1';
export const POSTGRES_PORT = 5433;
/** The Temporal frontend's gRPC port; every other server port moves by the same offset from
 * the module's development-postgres12.yaml (frontend 7233 there). */
export const FRONTEND_PORT = 7333;
export const TEMPLATE_FRONTEND_PORT = 7233;
export const UI_PORT = 8333;
/** The one PostgreSQL role: Temporal's own databases and the handrail store's (docker-compose.yml's name). */
export const POSTGRES_USER = 'temporal';
export const STORE_DATABASE = 'handrail';
/** The server config's file stem: `--env cluster` reads `config/cluster.yaml`. */
export const SERVER_CONFIG_ENV = 'cluster';

/** One background handrail worker process. Today a single one runs every stage; a per-stage
 * split adds more entries, each with its own env (e.g. which stages it polls). */
export interface WorkerSpec {
  name: string;
  /** Entry point, relative to the project root. */
  script: string;
  env: Record<string, string>;
  /** A line the process logs once it polls, which `up` waits for. */
  readyLine: RegExp;
}

/** A background process `up` starts and `down` stops: its pid and log files. */
export interface DaemonFiles {
  pidFile: string;
  logFile: string;
}

export interface ClusterSettings {
  root: string;
  host: string;
  namespace: string;
  taskQueue: string;
  postgres: { root: string; port: number; user: string; storeDatabase: string };
  server: DaemonFiles & { frontendPort: number; portOffset: number; configDir: string };
  ui: DaemonFiles & { port: number; root: string };
  workers: Array<WorkerSpec & DaemonFiles>;
}

export function clusterSettings(config: Pick<HandrailConfig, 'dataDir' | 'namespace' | 'taskQueue'>): ClusterSettings {
  const root = path.join(config.dataDir, 'cluster');
  const daemon = (name: string): DaemonFiles => ({ pidFile: path.join(root, `${name}.pid`), logFile: path.join(root, `${name}.log`) });
  const workers: WorkerSpec[] = [{ name: 'worker', script: 'src/worker/worker.ts', env: {}, readyLine: /handrail worker polling/ }];
  return {
    root,
    host: CLUSTER_HOST,
    namespace: config.namespace,
    taskQueue: config.taskQueue,
    postgres: { root: path.join(root, 'postgres'), port: POSTGRES_PORT, user: POSTGRES_USER, storeDatabase: STORE_DATABASE },
    server: { ...daemon('temporal-server'), frontendPort: FRONTEND_PORT, portOffset: FRONTEND_PORT - TEMPLATE_FRONTEND_PORT, configDir: path.join(root, 'config') },
    ui: { ...daemon('ui-server'), port: UI_PORT, root: path.join(root, 'ui-server') },
    workers: workers.map((w) => ({ ...w, ...daemon(w.name) })),
  };
}

export const frontendAddress = (s: ClusterSettings): string => `${s.host}:${s.server.frontendPort}`;
export const webUiUrl = (s: ClusterSettings): string => `http://${s.host}:${s.ui.port}`;
export const storeUrl = (s: ClusterSettings): string => `postgresql://${s.postgres.user}@${s.host}:${s.postgres.port}/${s.postgres.storeDatabase}`;

/** What the demo, the CLI and workers need to talk to the cluster (src/config.ts names). */
export function clusterEnv(s: ClusterSettings): Record<string, string> {
  return {
    TEMPORAL_ADDRESS: frontendAddress(s),
    TEMPORAL_NAMESPACE: s.namespace,
    HANDRAIL_TASK_QUEUE: s.taskQueue,
    HANDRAIL_WEB_UI_URL: webUiUrl(s),
    DATABASE_URL: storeUrl(s),
  };
}

/** A worker entry point as an absolute path (processes start with the project root as cwd). */
export const workerScript = (spec: WorkerSpec): string => path.join(PROJECT_ROOT, spec.script);
