import path from 'node:path';
import { loadClientConnectConfig } from '@temporalio/envconfig';
import type { TLSConfig } from '@temporalio/client';
import { codeRoot } from './package-paths';

/** Where handrail's own code lives (its sources, or `dist/` of an installed package); nothing is
 * ever written under it. Re-exported for the devtools, tests and benches that read settings here. */
export { codeRoot };

export interface HandrailConfig {
  /** gRPC address of the Temporal frontend, `host:port`. */
  temporalAddress: string;
  namespace: string;
  taskQueue: string;
  /** The user's folder for the dev server's SQLite file, the store and logs: HANDRAIL_DATA_DIR,
   * else `.data` in the working directory (never inside the installed package). */
  dataDir: string;
  /** Base URL of the Temporal Web UI, used to print links to jobs. */
  webUiUrl: string;
  /** Base URL of the records API (`npm run api`) that `handrail handoffs` calls. */
  apiUrl: string;
  /** PostgreSQL URL for the store; unset means embedded SQLite under dataDir. */
  databaseUrl?: string;
  /** Root of the handover workspace (where `transcript_materialize` writes its trace files):
   * HANDRAIL_WORKSPACE, else `<dataDir>/workspace`. */
  workspace: string;
  /** TLS, API key and gRPC metadata for the Temporal connection, from Temporal's environment
   * configuration (a `temporal.toml` profile, TEMPORAL_API_KEY, TEMPORAL_TLS*, …), as the
   * `temporal` CLI and the SDKs read it. */
  connection: TemporalConnectionExtras;
}

export interface TemporalConnectionExtras {
  tls?: TLSConfig | boolean;
  apiKey?: string;
  metadata?: Record<string, string>;
}

/** Temporal's environment configuration (`@temporalio/envconfig`): the profile named by
 * TEMPORAL_PROFILE (default `default`) in TEMPORAL_CONFIG_FILE or the per-user `temporal.toml`,
 * overridden by TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_API_KEY and TEMPORAL_TLS_*. */
function temporalProfile(env: NodeJS.ProcessEnv) {
  const vars = Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined));
  const options = { overrideEnvVars: vars, ...(vars.TEMPORAL_PROFILE ? { profile: vars.TEMPORAL_PROFILE } : {}) };
  let loaded: ReturnType<typeof loadClientConnectConfig>;
  try {
    loaded = loadClientConnectConfig(options);
  } catch (err) {
    // A file someone named must be read; the per-user default is optional, and a process may
    // run where it cannot read its home (a service user, a sandbox).
    if (vars.TEMPORAL_CONFIG_FILE)
      throw new Error(`TEMPORAL_CONFIG_FILE ${vars.TEMPORAL_CONFIG_FILE}: ${(err as Error).message}`);
    loaded = loadClientConnectConfig({ ...options, disableFile: true });
  }
  const { connectionOptions, namespace } = loaded;
  const { address, tls, apiKey, metadata } = connectionOptions;
  const extras: TemporalConnectionExtras = {
    ...(tls !== undefined && tls !== null ? { tls } : {}),
    ...(typeof apiKey === 'string' ? { apiKey } : {}),
    ...(metadata ? { metadata: metadata as Record<string, string> } : {}),
  };
  return { address, namespace, extras };
}

/** The job's task queue: HANDRAIL_TASK_QUEUE, else `handrail` (a public name). */
export const jobTaskQueue = (env: NodeJS.ProcessEnv = process.env): string => env.HANDRAIL_TASK_QUEUE || 'handrail';

/** Reads configuration from the environment (and the Temporal profile, for the connection);
 * every name here is documented in docs/. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, cwd: string = process.cwd()): HandrailConfig {
  const dataDir = path.resolve(cwd, env.HANDRAIL_DATA_DIR || '.data');
  const profile = temporalProfile(env);
  return {
    temporalAddress: profile.address || 'localhost:7233',
    namespace: profile.namespace || 'default',
    connection: profile.extras,
    taskQueue: jobTaskQueue(env),
    dataDir,
    webUiUrl: (env.HANDRAIL_WEB_UI_URL || 'http://localhost:8233').replace(/\/+$/, ''),
    apiUrl: (env.HANDRAIL_API_URL || 'http://127.0.0.1:8787').replace(/\/+$/, ''),
    databaseUrl: env.DATABASE_URL || undefined,
    workspace: path.resolve(cwd, env.HANDRAIL_WORKSPACE || path.join(dataDir, 'workspace')),
  };
}

/**
 * Which side of the per-stage split a worker process runs (HANDRAIL_WORKER_ROLE): `all` (the
 * default, for dev: one process polls the job queue and the writers' queue), `general` (the
 * rail's workflows and every stage that writes nothing), `writer` (only the stages that write an
 * external system, on the writers' queue, holding the CRM's credentials).
 */
export const WORKER_ROLES = ['all', 'general', 'writer'] as const;
export type WorkerRole = (typeof WORKER_ROLES)[number];

export const WORKER_ROLE_ENV = 'HANDRAIL_WORKER_ROLE';
export const CRM_DATABASE_URL_ENV = 'HANDRAIL_CRM_DATABASE_URL';

export function workerRole(env: NodeJS.ProcessEnv = process.env): WorkerRole {
  const role = env[WORKER_ROLE_ENV] || 'all';
  if (!(WORKER_ROLES as readonly string[]).includes(role))
    throw new Error(`HANDRAIL_WORKER_ROLE must be one of ${WORKER_ROLES.join(', ')}, not ${JSON.stringify(role)}`);
  return role as WorkerRole;
}

/** The CRM's own PostgreSQL URL (HANDRAIL_CRM_DATABASE_URL), which only a worker running writers
 * reads; unset, writers write the store's own tables. Not in loadConfig on purpose: nothing but
 * such a worker should ever look at it. */
export const crmDatabaseUrl = (env: NodeJS.ProcessEnv = process.env): string | undefined =>
  env[CRM_DATABASE_URL_ENV] || undefined;

/** Link to one job in the Web UI (workflow id = job_id). */
export function jobUrl(config: Pick<HandrailConfig, 'webUiUrl' | 'namespace'>, jobId: string): string {
  return `${config.webUiUrl}/namespaces/${encodeURIComponent(config.namespace)}/workflows/${encodeURIComponent(jobId)}`;
}
