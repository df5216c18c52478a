/**
 * `npm run api`: the handoff records HTTP API (handoffs-api.ts) on HANDRAIL_API_PORT (8787),
 * against the configured store (DATABASE_URL, else SQLite under HANDRAIL_DATA_DIR), serving the
 * workspace TEMPORAL_NAMESPACE with the built-in pipelines as its projects. Users from
 * HANDRAIL_API_USERS or HANDRAIL_API_USERS_JSON (api-users.ts). SIGINT/SIGTERM stop it.
 */
import { BUILT_IN_PIPELINES } from '../../contracts/pipelines';
import { loadConfig } from '../config';
import { openStore } from '../worker/store';
import { loadApiUsers } from './api-users';
import { buildHandoffsApi } from './handoffs-api';

async function main(): Promise<void> {
  const config = loadConfig();
  const users = loadApiUsers();
  const port = Number(process.env.HANDRAIL_API_PORT || 8787);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`HANDRAIL_API_PORT must be a port number, not ${process.env.HANDRAIL_API_PORT}`);
  const host = process.env.HANDRAIL_API_HOST || '127.0.0.1';
  const store = await openStore(config);
  const app = buildHandoffsApi({ store, users, workspaces: { [config.namespace]: BUILT_IN_PIPELINES.map((p) => p.name) }, logger: true });
  const address = await app.listen({ port, host });
  console.log(`handoff records API on ${address} (workspace ${config.namespace}; OpenAPI at ${address}/openapi.json)`);
  const stop = async () => {
    await app.close();
    await store.close();
    process.exit(0);
  };
  process.once('SIGINT', () => void stop());
  process.once('SIGTERM', () => void stop());
}

if (require.main === module) {
  main().catch((err: Error) => {
    console.error(err.message);
    process.exit(1);
  });
}
