/**
 * The records HTTP API (handoffs-api.ts) as a running server: `npm run api` and
 * `handrail serve api [--plugin PATH]` both run `serveHandoffsApi`. It listens on
 * HANDRAIL_API_PORT (8787) and HANDRAIL_API_HOST, against the configured store (DATABASE_URL, else
 * SQLite under HANDRAIL_DATA_DIR) and the Temporal server at TEMPORAL_ADDRESS (where `decide` sends
 * its update), serving the workspace TEMPORAL_NAMESPACE with the plugin's pipelines as its
 * projects (without a plugin, the built-in ones). Users from HANDRAIL_API_USERS or
 * HANDRAIL_API_USERS_JSON (api-users.ts). SIGINT/SIGTERM stop it.
 */
import type { Client } from '@temporalio/client';
import { BUILT_IN_PIPELINES } from '../../contracts/pipelines';
import { loadConfig } from '../config';
import { connectHandrail } from '../operator/client';
import type { HandrailPlugin } from '../plugin';
import { openStore } from '../worker/store';
import { loadApiUsers } from './api-users';
import { buildHandoffsApi } from './handoffs-api';
import { runServerProcess } from './process';

export const DEFAULT_API_PORT = 8787;

/** What the servers a project runs (`handrail serve …`, `handrail/servers`) are started with. */
export interface ServeOptions {
  /** The project's plugin: its pipelines are the ones served, its data converter the one its
   * client uses. Without one, handrail's built-in pipelines and its default data converter. */
  plugin?: HandrailPlugin;
  /** Where the settings come from (TEMPORAL_*, HANDRAIL_*); default `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** Gets the line saying where the server listens; default `console.log`. */
  log?: (line: string) => void;
  /** Fastify's request log (JSON lines on stdout); default on (the codec server's: off). */
  logger?: boolean;
}

/** A server listening; `close` stops it and releases what it holds (store, Temporal client). */
export interface RunningServer {
  address: string;
  close(): Promise<void>;
}

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

/** The records API listening, with its store and Temporal client; `close` releases all three. */
export async function serveHandoffsApi(options: ServeOptions = {}): Promise<RunningServer> {
  const env = options.env ?? process.env;
  const config = loadConfig(env);
  const users = loadApiUsers(env);
  const listen = apiListenOptions(env);
  const pipelines = options.plugin?.pipelines ?? BUILT_IN_PIPELINES;
  const store = await openStore(config);
  let temporal: Client;
  try {
    temporal = await connectHandrail(config, options.plugin);
  } catch (error) {
    await store.close();
    throw error;
  }
  const app = buildHandoffsApi({
    store,
    users,
    temporal,
    workspaces: { [config.namespace]: pipelines.map((p) => p.name) },
    logger: options.logger ?? true,
  });
  try {
    const address = await app.listen(listen);
    (options.log ?? console.log)(
      `handoff records API on ${address} (workspace ${config.namespace}; projects ${pipelines.map((p) => p.name).join(', ')}; OpenAPI at ${address}/openapi.json)`,
    );
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

if (require.main === module) runServerProcess(() => serveHandoffsApi());
