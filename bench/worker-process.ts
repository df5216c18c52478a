/**
 * A worker in its own OS process, so the bench can measure its CPU and peak RSS alone and chaos
 * can SIGKILL it. Started by bench/workers.ts with `node --import tsx`; configured like
 * `npm run worker` (TEMPORAL_ADDRESS, HANDRAIL_TASK_QUEUE, HANDRAIL_DATA_DIR) plus:
 *   HANDRAIL_BENCH_WORKER    `handrail` (the product's workers) or `baseline` (the bare chain)
 *   HANDRAIL_WORKFLOW_BUNDLE a prebuilt bundle, so a restart takes a second, not a webpack run
 *   HANDRAIL_BENCH_PAYMENTS  optional: the writer pays through these payments APIs (bench/paying-worker.ts)
 * Tells its parent `ready` over IPC and answers `usage` with its own rusage.
 */
import { handrailLogger } from '../src/worker/logger';
import { builtInPlugin } from '../src/pipelines';
import fs from 'node:fs';
import { Runtime, Worker } from '@temporalio/worker';
import { createActivities } from '../activities/built-in';
import { loadConfig } from '../src/config';
import { connectWorker } from '../src/connect';
import { loadHelpCenter } from '../src/worker/corpus';
import { openStore } from '../src/worker/store';
import { createHandrailWorkers, runWorkers } from '../src/worker/worker';
import { PAYMENTS_ENV, payingActivities, type PaymentsUrls } from './paying-worker';

export type WorkerKind = 'handrail' | 'baseline';

export interface WorkerUsage {
  /** User + system CPU of the whole process (JS and the SDK's native threads), microseconds. */
  cpuMicros: number;
  /** Peak resident set size so far, bytes. */
  maxRssBytes: number;
}

export type WorkerMessage = { type: 'ready' } | ({ type: 'usage' } & WorkerUsage);

function usage(): WorkerUsage {
  const r = process.resourceUsage();
  return { cpuMicros: r.userCPUTime + r.systemCPUTime, maxRssBytes: r.maxRSS * 1024 };
}

async function main(): Promise<void> {
  Runtime.install({ logger: handrailLogger() });
  const kind = process.env.HANDRAIL_BENCH_WORKER as WorkerKind;
  const bundlePath = process.env.HANDRAIL_WORKFLOW_BUNDLE;
  if (!bundlePath || (kind !== 'handrail' && kind !== 'baseline'))
    throw new Error('set HANDRAIL_BENCH_WORKER=handrail|baseline and HANDRAIL_WORKFLOW_BUNDLE');
  const config = loadConfig();
  const workflowBundle = { code: fs.readFileSync(bundlePath, 'utf8') };
  const connection = await connectWorker(config);
  const store = await openStore(config);
  let workers: Worker[];
  if (kind === 'handrail') {
    await loadHelpCenter(store);
    const payments = process.env[PAYMENTS_ENV];
    // Tools the research-brief researcher asks a human about first (comma-separated), for tests.
    const asks = process.env.HANDRAIL_RESEARCH_APPROVALS?.split(',').filter(Boolean) ?? [];
    workers = await createHandrailWorkers({
      connection,
      plugin: builtInPlugin(
        asks.length > 0 ? { researchApprovals: Object.fromEntries(asks.map((t) => [t, 'always' as const])) } : {},
      ),
      config,
      store,
      workflowBundle,
      ...(payments ? { overrideActivities: () => payingActivities(store, JSON.parse(payments) as PaymentsUrls) } : {}),
    });
  } else {
    // The same corpus and activities as handrail's worker, none of the rail.
    await loadHelpCenter(store);
    workers = [
      await Worker.create({
        connection,
        namespace: config.namespace,
        taskQueue: config.taskQueue,
        workflowBundle,
        activities: createActivities({ store }),
      }),
    ];
  }
  process.on('message', (msg) => {
    if (msg === 'usage') process.send?.({ type: 'usage', ...usage() } satisfies WorkerMessage);
  });
  try {
    await runAsChild(workers);
  } finally {
    await store.close();
    await connection.close();
  }
}

/** A child worker process's workers, run until they drain: the parent hears `ready` once they
 * poll, and its going away shuts them down (it must not leave a worker polling its server). */
export async function runAsChild(workers: readonly Worker[]): Promise<void> {
  process.on('disconnect', () => workers.forEach((w) => w.shutdown()));
  const running = runWorkers([...workers]);
  process.send?.({ type: 'ready' } satisfies WorkerMessage);
  await running;
}

/** A child worker process's entry: exits 0 once drained (the IPC channel to the parent would
 * keep it alive), 1 with the error's stack on failure. */
export function childMain(name: string, main: () => Promise<void>): void {
  main().then(
    () => process.exit(0),
    (err: Error) => {
      console.error(`${name}: ${err.stack ?? err.message}`);
      process.exit(1);
    },
  );
}

if (require.main === module) childMain('bench worker', main);
