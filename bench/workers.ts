/**
 * The parent side of bench/worker-process.ts: start a worker process, wait until it polls, ask
 * for its CPU and peak RSS, stop it gracefully or SIGKILL it.
 */
import { fork, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { stopOnSignal } from '../src/devtools/stop-on-signal';
import type { WorkerKind, WorkerMessage, WorkerUsage } from './worker-process';

export interface WorkerProcessOptions {
  kind: WorkerKind;
  address: string;
  taskQueue: string;
  /** The store lives here (`handrail.sqlite`); a restarted worker reopens the same file. */
  dataDir: string;
  bundlePath: string;
  /** Payload codec keys for this worker (HANDRAIL_CODEC_KEYS JSON, '' for none); unset, the parent's. */
  codecKeys?: string;
  /** Extra environment, e.g. a model endpoint for this worker only. */
  env?: Record<string, string>;
}

export interface WorkerProcess {
  pid: number;
  child: ChildProcess;
  /** Resolves with the exit code or signal once the process is gone. */
  exited: Promise<string>;
  usage(): Promise<WorkerUsage>;
  /** SIGTERM: the SDK drains in-flight tasks, then the process exits. */
  stop(): Promise<void>;
  /** SIGKILL: no drain, no goodbye — what chaos is about. */
  kill(): Promise<void>;
}

const READY_TIMEOUT_MS = 60_000;

export async function startWorkerProcess(opts: WorkerProcessOptions): Promise<WorkerProcess> {
  // `--import tsx` runs TypeScript in this very process (the tsx CLI would add a wrapper process
  // that a SIGKILL leaves orphaned); source-maps-off.mjs then undoes what tsx does to stack
  // traces, so the worker runs as the shipped one does on plain Node.
  // HANDRAIL_BENCH_CPU_PROF=<dir>: each worker process writes V8 CPU profiles there (one per
  // thread, the workflow thread included) when it exits; docs/benchmarks.md "Profile".
  const profileDir = process.env.HANDRAIL_BENCH_CPU_PROF;
  const child = fork(path.join(__dirname, 'worker-process.ts'), [], {
    execArgv: [
      '--import',
      'tsx',
      '--import',
      path.join(__dirname, 'source-maps-off.mjs'),
      ...(profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : []),
    ],
    env: {
      ...process.env,
      TEMPORAL_ADDRESS: opts.address,
      HANDRAIL_TASK_QUEUE: opts.taskQueue,
      HANDRAIL_DATA_DIR: opts.dataDir,
      HANDRAIL_BENCH_WORKER: opts.kind,
      HANDRAIL_WORKFLOW_BUNDLE: opts.bundlePath,
      DATABASE_URL: '',
      ...(opts.codecKeys === undefined ? {} : { HANDRAIL_CODEC_KEYS: opts.codecKeys, HANDRAIL_CODEC_KEYS_FILE: '' }),
      ...opts.env,
    },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const exited = new Promise<string>((resolve) =>
    child.once('exit', (code, signal) => resolve(signal ?? `exit ${code}`)),
  );
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${opts.kind} worker did not start within ${READY_TIMEOUT_MS / 1000}s`));
    }, READY_TIMEOUT_MS);
    child.on('message', (msg: WorkerMessage) => {
      if (msg.type !== 'ready') return;
      clearTimeout(timer);
      resolve();
    });
    void exited.then((how) => {
      clearTimeout(timer);
      reject(new Error(`${opts.kind} worker exited before it was ready (${how})`));
    });
  });

  const gone = () => child.exitCode !== null || child.signalCode !== null;
  const signal = async (sig: NodeJS.Signals) => {
    if (!gone()) child.kill(sig);
    await exited;
  };
  // A SIGTERM or SIGINT to the bench stops it (drained) before the lab it works on, which was
  // started before it: left to the disconnect, it would drain after the lab's data dir was removed.
  const stop = stopOnSignal(() => signal('SIGTERM'));
  void exited.then(stop);
  return {
    pid: child.pid!,
    child,
    exited,
    usage: () =>
      new Promise<WorkerUsage>((resolve) => {
        const onMessage = (msg: WorkerMessage) => {
          if (msg.type !== 'usage') return;
          child.off('message', onMessage);
          resolve({ cpuMicros: msg.cpuMicros, maxRssBytes: msg.maxRssBytes });
        };
        child.on('message', onMessage);
        child.send('usage');
      }),
    stop,
    kill: () => signal('SIGKILL'),
  };
}
