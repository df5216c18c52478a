/**
 * `handrail/servers` — the servers a project runs beside its workers, serving its own pipelines:
 * the A2A server (docs/a2a.md), the handoff records HTTP API (docs/operate.md) and the codec
 * server (docs/codec.md). `handrail serve a2a|api|codec [--plugin PATH]` runs the same functions:
 *
 *   import { runServerProcess, serveA2a } from 'handrail/servers';
 *   import { handrail } from './plugin';
 *   runServerProcess(() => serveA2a({ plugin: handrail }));   // SIGINT/SIGTERM stop it
 *
 * Each reads its settings from the environment (or `env`), as `npm run a2a|api|codec-server` do;
 * the `build…` functions return the Fastify app, not listening, for a process of your own.
 */
export { serveA2a, DEFAULT_A2A_PORT } from './a2a-main';
export { serveHandoffsApi, DEFAULT_API_PORT, type RunningServer, type ServeOptions } from './api-main';
export { serveCodecServer, buildCodecServer, type CodecServerOptions } from './codec-server';
export { runServerProcess } from './process';
export { buildA2aServer, AGENT_CARD_PATH, type A2aServerOptions } from './a2a/server';
export { buildHandoffsApi, type HandoffsApiOptions } from './handoffs-api';
export { apiUsers, loadApiUsers, sha256Token, type ApiUser, type ApiUsers } from './api-users';
