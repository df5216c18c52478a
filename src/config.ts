import path from 'node:path';

/** Where the repository lives; project-local data (SQLite files, logs) goes under it. */
export const PROJECT_ROOT = path.resolve(__dirname, '..');

export interface HandrailConfig {
  /** gRPC address of the Temporal frontend, `host:port`. */
  temporalAddress: string;
  namespace: string;
  taskQueue: string;
  /** Project-local folder for the dev server's SQLite file, the store and logs. */
  dataDir: string;
  /** Base URL of the Temporal Web UI, used to print links to jobs. */
  webUiUrl: string;
  /** Base URL of the handoff records API (`npm run api`) that `handrail handoffs` calls. */
  apiUrl: string;
  /** PostgreSQL URL for the store; unset means embedded SQLite under dataDir. */
  databaseUrl?: string;
  /** Root of the handover workspace (seed 000: `transcript_materialize` trace files):
   * HANDRAIL_WORKSPACE, else `<dataDir>/workspace`. */
  workspace: string;
}

/** Reads configuration from the environment; every name here is documented in the README. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): HandrailConfig {
  const dataDir = path.resolve(env.HANDRAIL_DATA_DIR || path.join(PROJECT_ROOT, '.data'));
  return {
    temporalAddress: env.TEMPORAL_ADDRESS || 'localhost:7233',
    namespace: env.TEMPORAL_NAMESPACE || 'default',
    taskQueue: env.HANDRAIL_TASK_QUEUE || 'handrail',
    dataDir,
    webUiUrl: (env.HANDRAIL_WEB_UI_URL || 'http://localhost:8233').replace(/\/+$/, ''),
    apiUrl: (env.HANDRAIL_API_URL || 'http://127.0.0.1:8787').replace(/\/+$/, ''),
    databaseUrl: env.DATABASE_URL || undefined,
    workspace: path.resolve(env.HANDRAIL_WORKSPACE || path.join(dataDir, 'workspace')),
  };
}

/** Link to one job in the Web UI (workflow id = job_id). */
export function jobUrl(config: Pick<HandrailConfig, 'webUiUrl' | 'namespace'>, jobId: string): string {
  return `${config.webUiUrl}/namespaces/${encodeURIComponent(config.namespace)}/workflows/${encodeURIComponent(jobId)}`;
}
