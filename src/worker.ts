/**
 * The handrail worker: runs the rail (workflows) and the stages (activities).
 * `npm run worker` — configuration from the environment (src/config.ts); SIGINT/SIGTERM drain
 * in-flight tasks and stop (the SDK's runtime installs those handlers).
 */
import type { Tracer } from '@opentelemetry/api';
import type { NativeConnection, WorkerOptions } from '@temporalio/worker';
import { Worker } from '@temporalio/worker';
import { createActivities, type HandrailActivities } from '../activities';
import { REFERENCE_STAGES, createStageRegistry } from '../contracts/stages';
import { loadConfig, type HandrailConfig } from './config';
import { loadHelpCenter } from './corpus';
import { createChatModel, modelConfigFromEnv } from './model';
import { connectWorker } from './connect';
import { openStore, type Store } from './store';
import { railSinks, tracingFromEnv } from './tracing';

/**
 * How workflow code is run: data converter, workflow interceptors (today the SDK defaults) and
 * the rail's sinks (hop tracing). Replay (scripts/replay/histories.ts) uses the same object, so a
 * codec or interceptor added here is exercised by the replay suite too. A live worker swaps in
 * sinks bound to its own tracer.
 */
export const WORKFLOW_RUNTIME: Pick<WorkerOptions, 'dataConverter' | 'interceptors' | 'sinks'> = { sinks: railSinks() };

export interface HandrailWorkerOptions {
  connection: NativeConnection;
  config: Pick<HandrailConfig, 'namespace' | 'taskQueue'>;
  store: Store;
  /** A prebuilt bundle (tests build one per run); otherwise workflows are bundled at start. */
  workflowBundle?: { code: string };
  /** Where hop spans go (src/tracing.ts); the process's global tracer provider by default. */
  tracer?: Tracer;
  /** Swap some activities (tests of a misbehaving stage). */
  overrideActivities?: (real: HandrailActivities) => Partial<HandrailActivities> & Record<string, unknown>;
}

/**
 * Workers for the rail and every stage. Stages whose card names its own task queue get a worker
 * of their own on that queue, so only a process holding that stage's credentials runs it.
 * A bad stage registry refuses to start (StageRegistryError lists every problem).
 */
export async function createHandrailWorkers(opts: HandrailWorkerOptions): Promise<Worker[]> {
  const registry = createStageRegistry(REFERENCE_STAGES);
  // Idempotent: a fresh store gets the shipped help-center corpus, a current one is unchanged.
  await loadHelpCenter(opts.store);
  const modelConfig = modelConfigFromEnv();
  const real = createActivities({ store: opts.store, model: modelConfig ? createChatModel(modelConfig) : undefined });
  const activities = { ...real, ...opts.overrideActivities?.(real) };
  const isolated = registry.cards.filter((c) => c.taskQueue && c.taskQueue !== opts.config.taskQueue);
  const main = await Worker.create({
    connection: opts.connection,
    namespace: opts.config.namespace,
    taskQueue: opts.config.taskQueue,
    ...(opts.workflowBundle ? { workflowBundle: opts.workflowBundle } : { workflowsPath: require.resolve('../workflows') }),
    ...WORKFLOW_RUNTIME,
    sinks: railSinks(opts.tracer),
    activities,
  });
  const own = await Promise.all(
    isolated.map((card) =>
      Worker.create({
        connection: opts.connection,
        namespace: opts.config.namespace,
        taskQueue: card.taskQueue!,
        activities: { [card.name]: (activities as Record<string, unknown>)[card.name] } as object,
      }),
    ),
  );
  return [main, ...own];
}

/** Runs workers until a shutdown signal; resolves once they drained. */
export async function runWorkers(workers: Worker[]): Promise<void> {
  await Promise.all(workers.map((w) => w.run()));
}

async function main(): Promise<void> {
  const config = loadConfig();
  const connection = await connectWorker(config);
  const store = await openStore(config);
  const tracing = await tracingFromEnv();
  try {
    const workers = await createHandrailWorkers({ connection, config, store, tracer: tracing.tracer });
    console.log(`handrail worker polling "${config.taskQueue}" on ${config.temporalAddress} (namespace ${config.namespace}, store ${store.backend}). Ctrl-C stops it.`);
    await runWorkers(workers);
  } finally {
    await tracing.shutdown();
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
