/**
 * `npm run a2a`: the A2A server (a2a/server.ts) on HANDRAIL_A2A_PORT (8788) and HANDRAIL_A2A_HOST,
 * serving the built-in pipelines as skills: jobs start on HANDRAIL_TASK_QUEUE at the Temporal
 * server of TEMPORAL_ADDRESS / TEMPORAL_NAMESPACE. Callers are the handoff records API's users
 * (HANDRAIL_API_USERS or HANDRAIL_API_USERS_JSON); HANDRAIL_A2A_URL is the address the agent card
 * gives them (default: the one each request came to). SIGINT/SIGTERM stop it.
 */
import { BUILT_IN_PIPELINES } from '../../contracts/pipelines';
import { ticketArtifactBodies } from '../../contracts/pipelines/ticket-artifacts';
import { loadConfig } from '../config';
import { connectHandrail } from '../operator/client';
import { AGENT_CARD_PATH, buildA2aServer } from './a2a/server';
import { apiListenOptions } from './api-main';
import { loadApiUsers } from './api-users';
import { runServerProcess } from './process';

export const DEFAULT_A2A_PORT = 8788;

async function main() {
  const config = loadConfig();
  const users = loadApiUsers();
  const temporal = await connectHandrail(config);
  const app = buildA2aServer({
    temporal,
    users,
    pipelines: BUILT_IN_PIPELINES,
    entrySchemas: ticketArtifactBodies,
    ...(process.env.HANDRAIL_A2A_URL ? { baseUrl: process.env.HANDRAIL_A2A_URL.replace(/\/$/, '') } : {}),
    logger: true,
  });
  try {
    const address = await app.listen(apiListenOptions(process.env, 'HANDRAIL_A2A', DEFAULT_A2A_PORT));
    console.log(`A2A server on ${address} (agent card ${address}${AGENT_CARD_PATH}; workspace ${config.namespace})`);
  } catch (error) {
    await temporal.connection.close();
    throw error;
  }
  return {
    async close() {
      await app.close();
      await temporal.connection.close();
    },
  };
}

if (require.main === module) runServerProcess(main);
