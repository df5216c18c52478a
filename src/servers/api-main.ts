/**
 * `npm run api`: the records HTTP API (handoffs-api.ts) on HANDRAIL_API_PORT (8787),
 * against the configured store (DATABASE_URL, else SQLite under HANDRAIL_DATA_DIR) and the
 * Temporal server at TEMPORAL_ADDRESS (where `decide` sends its update), serving the workspace
 * TEMPORAL_NAMESPACE with the built-in pipelines as its projects. Users from HANDRAIL_API_USERS
 * or HANDRAIL_API_USERS_JSON (api-users.ts). SIGINT/SIGTERM stop it.
 */
import { BUILT_IN_PIPELINES } from '../../contracts/pipelines';
import { loadConfig, type HandrailConfig } from '../config';
import { connectHandrail } from '../operator/client';
import { openStore } from '../worker/store';
import { loadApiUsers, type ApiUsers } from './api-users';
import { buildHandoffsApi } from './handoffs-api';
import { runServerProcess } from './process';

export const DEFAULT_API_PORT = 8787;

/** HANDRAIL_API_PORT and HANDRAIL_API_HOST, checked (another server's, with its own `prefix`). */
export function apiListenOptions(
  env: NodeJS.ProcessEnv = process.env,
  prefix = 'HANDRAIL_API',
  defaultPort = DEFAULT_API_PORT,
): { port: number; host: string } {
  const given = env[`${prefix}_PORT`];
  const port = Number(given || defaultPort);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new Error(`${prefix}_PORT must be a port number, not ${given}`);
  return { port, host: env[`${prefix}_HOST`] || '127.0.0.1' };
}

/** The API listening, with its store and Temporal client; `close` releases all three. */
export async function serveHandoffsApi(
  config: HandrailConfig,
  users: ApiUsers,
  listen: { port: number; host: string },
  logger = true,
) {
  const store = await openStore(config);
  const temporal = await connectHandrail(config);
  const app = buildHandoffsApi({
    store,
    users,
    temporal,
    workspaces: { [config.namespace]: BUILT_IN_PIPELINES.map((p) => p.name) },
    logger,
  });
  try {
    const address = await app.listen(listen);
    return {
      address,
      async close() {
        await app.close();
        await temporal.connection.close();
        await store.close();
      },
    };
  } catch (error) {
    await temporal.connection.close();
    await store.close();
    throw error;
  }
}

async function main() {
  const config = loadConfig();
  const api = await serveHandoffsApi(config, loadApiUsers(), apiListenOptions());
  console.log(
    `handoff records API on ${api.address} (workspace ${config.namespace}; OpenAPI at ${api.address}/openapi.json)`,
  );
  return api;
}

if (require.main === module) runServerProcess(main);
