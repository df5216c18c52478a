/**
 * The soak's worker processes (`npm run chaos -- --cluster --soak`, bench/chaos-run.ts): one side
 * of the cluster's per-stage split (HANDRAIL_WORKER_ROLE general or writer) as src/worker/main.ts
 * runs it (the store, and for the writer the CRM on its own database), with two differences:
 *   HANDRAIL_WORKFLOW_BUNDLE a prebuilt bundle, so the general worker's restart after a kill takes
 *                            seconds, not a webpack run (hundreds of kills fit in an hour)
 *   HANDRAIL_BENCH_PAYMENTS  the writer's ticket writeback pays through the write chaos's payments
 *                            APIs (bench/paying-worker.ts) for the jobs whose id names a reconcile
 *                            mode (the soak's ticket-triage jobs); for the others (ticket-hub's,
 *                            whose writeback is the same card) and the other writers, the CRM
 * Tells its parent `ready` over IPC once it polls; started by startSoakWorker below.
 */
import { fork, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Runtime, type Worker } from '@temporalio/worker';
import { crmDatabaseUrl, loadConfig, workerRole, type WorkerRole } from '../src/config';
import { connectWorker } from '../src/connect';
import { builtInPlugin } from '../src/pipelines';
import { loadHelpCenter } from '../src/worker/corpus';
import { handrailLogger } from '../src/worker/logger';
import { openStore } from '../src/worker/store';
import { createHandrailWorkers } from '../src/worker/worker';
import { MODES, PAYMENTS_ENV, payingActivities, type PaymentsUrls } from './paying-worker';
import { childMain, runAsChild, type WorkerMessage } from './worker-process';

export interface SoakWorker {
  pid: number;
  child: ChildProcess;
  /** Resolves with the exit code or signal once the process is gone. */
  exited: Promise<string>;
  alive(): boolean;
  /** SIGKILL, and wait until it is gone. */
  kill(): Promise<void>;
}

const READY_TIMEOUT_MS = 120_000;

/** Starts one side (`role`) with `env` (where to connect, the store, the CRM, the bundle, the
 * payments APIs) on top of ours; its output is appended to `logFile`. Resolves once it polls. */
export async function startSoakWorker(
  role: WorkerRole,
  env: Record<string, string>,
  logFile: string,
): Promise<SoakWorker> {
  fs.mkdirSync(path.dirname(logFile), { recursive: true });
  const fd = fs.openSync(logFile, 'a');
  const child = fork(__filename, [], {
    execArgv: ['--import', 'tsx', '--import', path.join(__dirname, 'source-maps-off.mjs')],
    env: { ...process.env, ...env, HANDRAIL_WORKER_ROLE: role },
    stdio: ['ignore', fd, fd, 'ipc'],
  });
  fs.closeSync(fd);
  const exited = new Promise<string>((resolve) =>
    child.once('exit', (code, signal) => resolve(signal ?? `exit ${code}`)),
  );
  const alive = () => child.exitCode === null && child.signalCode === null;
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${role} worker did not poll within ${READY_TIMEOUT_MS / 1000}s (log ${logFile})`));
    }, READY_TIMEOUT_MS);
    child.on('message', (msg) => {
      if ((msg as WorkerMessage).type !== 'ready') return;
      clearTimeout(timer);
      resolve();
    });
    void exited.then((how) => {
      clearTimeout(timer);
      reject(new Error(`${role} worker exited before it polled (${how}; log ${logFile})`));
    });
  });
  return {
    pid: child.pid!,
    child,
    exited,
    alive,
    async kill() {
      if (alive()) child.kill('SIGKILL');
      await exited;
    },
  };
}

/** A job whose id names a reconcile mode pays (bench/paying-worker.ts's ids). */
const paysAnApi = (jobId: string): boolean => MODES.some((m) => jobId.includes(`-${m}-job`));

async function main(): Promise<void> {
  Runtime.install({ logger: handrailLogger() });
  const config = loadConfig();
  const role = workerRole();
  const bundlePath = process.env.HANDRAIL_WORKFLOW_BUNDLE;
  const payments = process.env[PAYMENTS_ENV];
  const crmUrl = role === 'general' ? undefined : crmDatabaseUrl();
  const connection = await connectWorker(config);
  const store = await openStore(config);
  const crm = crmUrl ? await openStore({ databaseUrl: crmUrl }) : undefined;
  try {
    if (role !== 'writer') await loadHelpCenter(store);
    const workers: Worker[] = await createHandrailWorkers({
      connection,
      plugin: builtInPlugin(),
      config,
      store,
      role,
      ...(crm ? { writes: crm } : {}),
      ...(bundlePath ? { workflowBundle: { code: fs.readFileSync(bundlePath, 'utf8') } } : {}),
      ...(payments && role !== 'general'
        ? {
            overrideActivities: (real: Readonly<Record<string, unknown>>) => {
              const pay = payingActivities(store, JSON.parse(payments) as PaymentsUrls).writeback;
              const write = real.writeback as typeof pay;
              const writeback: typeof pay = (pkg, ...rest) =>
                paysAnApi(pkg.package.job_id) ? pay(pkg, ...rest) : write(pkg, ...rest);
              return { writeback };
            },
          }
        : {}),
    });
    await runAsChild(workers);
  } finally {
    await crm?.close();
    await store.close();
    await connection.close();
  }
}

if (require.main === module) childMain('soak worker', main);
