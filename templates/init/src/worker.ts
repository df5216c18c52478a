// `npm run worker`: runs the rail and the stages against the Temporal server of TEMPORAL_ADDRESS
// (default localhost:7233; `npx handrail` has no server command: use `temporal server start-dev`).
import { connectWorker, createHandrailWorkers, loadConfig, openStore, runWorkers } from 'handrail';
import { handrail } from './plugin.js';

async function main(): Promise<void> {
  const config = loadConfig();
  const connection = await connectWorker(config);
  const store = await openStore(config);
  const workers = await createHandrailWorkers({ connection, plugin: handrail, config, store });
  console.log(`worker polling "${config.taskQueue}" on ${config.temporalAddress}; Ctrl-C stops it`);
  await runWorkers(workers);
  await store.close();
  await connection.close();
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
