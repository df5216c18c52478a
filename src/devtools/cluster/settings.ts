/**
 * Where `npm run cluster` puts everything and which ports it uses. Fixed ports by default, one
 * documented base per part, all off the dev server's 7233/8233 so both can run side by side
 * (docs/cluster.md lists them); a test passes ports of its own so it never meets a developer's cluster.
 */
import path from 'node:path';
import { writerTaskQueue } from '../../../contracts';
import { CRM_DATABASE_URL_ENV, codeRoot, WORKER_ROLE_ENV, type HandrailConfig, type WorkerRole } from '../../config';

export const CLUSTER_HOST = '127.0.0.1';
export interface ClusterPorts {
  postgres: number;
  /** The Temporal frontend's gRPC port; every other server port moves by the same offset from
   * the module's development-postgres12.yaml (frontend 7233 there). */
  frontend: number;
  ui: number;
}
export const CLUSTER_PORTS: ClusterPorts = { postgres: 5433, frontend: 7333, ui: 8333 };
export const TEMPLATE_FRONTEND_PORT = 7233;
/** The one PostgreSQL role: Temporal's own databases, the handrail store's and the CRM's (docker-compose.yml's names). */
export const POSTGRES_USER = 'temporal';
export const STORE_DATABASE = 'handrail';
/** The CRM the writers write, a database of its own: only the writer worker gets its URL. */
export const CRM_DATABASE = 'crm';
/** The server config's file stem: `--env cluster` reads `config/cluster.yaml`. */
export const SERVER_CONFIG_ENV = 'cluster';

/** One background handrail worker process: a side of the per-stage split (HANDRAIL_WORKER_ROLE). */
export interface WorkerSpec {
  name: string;
  role: WorkerRole;
  /** Entry point, relative to the project root. */
  script: string;
  /** Its environment on top of clusterEnv (the role; the writer's CRM URL). */
  env: Record<string, string>;
  /** The task queues it polls (shown by `status`). */
  taskQueues: string[];
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
  postgres: { root: string; port: number; user: string; storeDatabase: string; crmDatabase: string };
  server: DaemonFiles & { frontendPort: number; portOffset: number; configDir: string };
  ui: DaemonFiles & { port: number; root: string };
  workers: Array<WorkerSpec & DaemonFiles>;
}

const postgresUrl = (host: string, port: number, database: string) =>
  `postgresql://${POSTGRES_USER}@${host}:${port}/${database}`;

/**
 * The per-stage split as two processes: `worker` (general: the rail and every stage that writes
 * nothing, on the job queue) and `writer` (the stages that write, on the writers' queue), the
 * writer alone given the CRM's URL. docker-compose.yml runs the same two (a unit test compares them).
 */
export function clusterWorkers(taskQueue: string, crmUrl: string): WorkerSpec[] {
  const worker = (
    name: string,
    role: WorkerRole,
    taskQueues: string[],
    env: Record<string, string> = {},
  ): WorkerSpec => ({
    name,
    role,
    script: 'src/worker/main.ts',
    env: { [WORKER_ROLE_ENV]: role, ...env },
    taskQueues,
    readyLine: /handrail worker polling/,
  });
  return [
    worker('worker', 'general', [taskQueue]),
    worker('writer', 'writer', [writerTaskQueue(taskQueue)], { [CRM_DATABASE_URL_ENV]: crmUrl }),
  ];
}

export function clusterSettings(
  config: Pick<HandrailConfig, 'dataDir' | 'namespace' | 'taskQueue'>,
  ports: ClusterPorts = CLUSTER_PORTS,
): ClusterSettings {
  const root = path.join(config.dataDir, 'cluster');
  const daemon = (name: string): DaemonFiles => ({
    pidFile: path.join(root, `${name}.pid`),
    logFile: path.join(root, `${name}.log`),
  });
  return {
    root,
    host: CLUSTER_HOST,
    namespace: config.namespace,
    taskQueue: config.taskQueue,
    postgres: {
      root: path.join(root, 'postgres'),
      port: ports.postgres,
      user: POSTGRES_USER,
      storeDatabase: STORE_DATABASE,
      crmDatabase: CRM_DATABASE,
    },
    server: {
      ...daemon('temporal-server'),
      frontendPort: ports.frontend,
      portOffset: ports.frontend - TEMPLATE_FRONTEND_PORT,
      configDir: path.join(root, 'config'),
    },
    ui: { ...daemon('ui-server'), port: ports.ui, root: path.join(root, 'ui-server') },
    workers: clusterWorkers(config.taskQueue, postgresUrl(CLUSTER_HOST, ports.postgres, CRM_DATABASE)).map((w) => ({
      ...w,
      ...daemon(w.name),
    })),
  };
}

export const frontendAddress = (s: ClusterSettings): string => `${s.host}:${s.server.frontendPort}`;
export const webUiUrl = (s: ClusterSettings): string => `http://${s.host}:${s.ui.port}`;
export const storeUrl = (s: ClusterSettings): string => postgresUrl(s.host, s.postgres.port, s.postgres.storeDatabase);
export const crmUrl = (s: ClusterSettings): string => postgresUrl(s.host, s.postgres.port, s.postgres.crmDatabase);

/** What the demo, the CLI and workers need to talk to the cluster (src/config.ts names). No CRM
 * URL: only the writer worker's own env (WorkerSpec.env) has it. */
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
export const workerScript = (spec: WorkerSpec): string => path.join(codeRoot, spec.script);
