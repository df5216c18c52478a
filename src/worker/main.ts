/**
 * The shipped worker process (`npm run worker`): the built-in pipelines, configuration from the
 * environment (src/config.ts); SIGINT/SIGTERM drain in-flight tasks and stop (the SDK's runtime
 * installs those handlers). HANDRAIL_WORKER_ROLE picks one side of the per-stage split (general or
 * writer); unset, it runs both.
 */
import { crmDatabaseUrl, loadConfig, workerRole } from '../config';
import { connectWorker } from '../connect';
import { builtInPlugin } from '../pipelines';
import { installHandrailLogger } from './logger';
import { openStore } from './store';
import { tracingFromEnv } from './tracing';
import { createHandrailWorkers, handoverWorkspace, runWorkers } from './worker';

async function main(): Promise<void> {
  installHandrailLogger('INFO');
  const config = loadConfig();
  const role = workerRole();
  // Only a process that runs writers reads the CRM's URL: the general side never looks at it.
  const crmUrl = role === 'general' ? undefined : crmDatabaseUrl();
  const connection = await connectWorker(config);
  const store = await openStore(config);
  const crm = crmUrl ? await openStore({ databaseUrl: crmUrl }) : undefined;
  const tracing = await tracingFromEnv();
  try {
    const workers = await createHandrailWorkers({
      connection,
      plugin: builtInPlugin(),
      config,
      store,
      role,
      ...(crm ? { writes: crm } : {}),
      tracer: tracing.tracer,
      temporalPlugins: tracing.temporalPlugins,
      workspace: handoverWorkspace(config),
    });
    const queues = workers.map((w) => `"${w.options.taskQueue}"`).join(', ');
    const crmNote = role === 'general' ? 'no writers' : crm ? 'writes on their own database' : 'writes in the store';
    console.log(
      `handrail worker polling ${queues} on ${config.temporalAddress} (role ${role}, namespace ${config.namespace}, store ${store.backend}, ${crmNote}). Ctrl-C stops it.`,
    );
    await runWorkers(workers);
  } finally {
    await tracing.shutdown();
    await crm?.close();
    await store.close();
    await connection.close();
  }
}

if (require.main === module) {
  main().catch((err: Error) => {
    console.error(err.message);
    process.exit(1);
  });
}
