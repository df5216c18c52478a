/**
 * The A2A server (a2a/server.ts) as a running server: `npm run a2a` and
 * `handrail serve a2a [--plugin PATH]` both run `serveA2a`. It listens on HANDRAIL_A2A_PORT
 * (8788) and HANDRAIL_A2A_HOST, serving the plugin's pipelines as skills (without a plugin, the
 * built-in ones): jobs start on HANDRAIL_TASK_QUEUE at the Temporal server of TEMPORAL_ADDRESS /
 * TEMPORAL_NAMESPACE. Callers are the handoff records API's users (HANDRAIL_API_USERS or
 * HANDRAIL_API_USERS_JSON); HANDRAIL_A2A_URL is the address the agent card gives them (default:
 * the one each request came to). SIGINT/SIGTERM stop it.
 */
import { BUILT_IN_PIPELINES } from '../../contracts/pipelines';
import { ticketArtifactBodies } from '../../contracts/pipelines/ticket-artifacts';
import { loadConfig } from '../config';
import { connectHandrail } from '../operator/client';
import { AGENT_CARD_PATH, buildA2aServer } from './a2a/server';
import { apiListenOptions, type RunningServer, type ServeOptions } from './api-main';
import { loadApiUsers } from './api-users';
import { runServerProcess } from './process';

export const DEFAULT_A2A_PORT = 8788;

/** The A2A server listening, with its Temporal client; `close` releases both. */
export async function serveA2a(options: ServeOptions = {}): Promise<RunningServer> {
  const env = options.env ?? process.env;
  const config = loadConfig(env);
  const users = loadApiUsers(env);
  const listen = apiListenOptions(env, 'HANDRAIL_A2A', DEFAULT_A2A_PORT);
  const baseUrl = env.HANDRAIL_A2A_URL?.replace(/\/$/, '');
  const temporal = await connectHandrail(config, options.plugin);
  const app = buildA2aServer({
    temporal,
    users,
    // The built-in pipelines check their ticket entries with precompiled validators: the card
    // shows the zod schemas those were compiled from. A plugin's pipelines carry their own.
    ...(options.plugin
      ? { pipelines: options.plugin.pipelines }
      : { pipelines: BUILT_IN_PIPELINES, entrySchemas: ticketArtifactBodies }),
    taskQueue: config.taskQueue,
    ...(baseUrl ? { baseUrl } : {}),
    logger: options.logger ?? true,
  });
  try {
    const address = await app.listen(listen);
    (options.log ?? console.log)(
      `A2A server on ${address} (agent card ${address}${AGENT_CARD_PATH}; workspace ${config.namespace}; skills ${(options.plugin?.pipelines ?? BUILT_IN_PIPELINES).map((p) => p.name).join(', ')})`,
    );
    return {
      address,
      async close() {
        await app.close();
        await temporal.connection.close();
      },
    };
  } catch (error) {
    await temporal.connection.close();
    throw error;
  }
}

if (require.main === module) runServerProcess(() => serveA2a());
