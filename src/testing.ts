/**
 * `handrail/testing` — what a pipeline's own test suite needs: a real Temporal dev server for the
 * run (on free ports, handrail's search attributes registered, the `temporal` CLI found or
 * installed as `npm run demo` does), a worker of the pipeline's plugin on a task queue of its own
 * with a throwaway store, and a job run to its end.
 *
 *   const server = await startTestServer();              // once per test file or run
 *   const rail = await startTestWorker(server, plugin);  // the pipelines under test
 *   const result = await runJob(rail, request);          // status, acks, receipt, package
 *   await rail.stop(); await server.stop();
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, type Worker } from '@temporalio/worker';
import type { JobResult, Pipeline } from '../contracts';
import { ensureDevServer, freePort } from './devtools/devserver/server';
import { startJob } from './operator/client';
import type { HandrailPlugin } from './plugin';
import { openStore, type Store } from './worker/store';
import { installHandrailLogger } from './worker/logger';
import { createHandrailWorkers, runWorkers } from './worker/worker';

export interface TestServer {
  address: string;
  namespace: string;
  webUiUrl: string;
  stop(): Promise<void>;
}

/** A dev server of the test run's own, with its history in memory; `stop()` ends it. */
export async function startTestServer(opts: { log?: (message: string) => void } = {}): Promise<TestServer> {
  const [port, uiPort] = [await freePort(), await freePort()];
  // The server's own log goes to a file of the run's, not into the test report.
  const logDir = fs.mkdtempSync(path.join(os.tmpdir(), 'handrail-test-server-'));
  const server = await ensureDevServer({
    port,
    uiPort,
    logFile: path.join(logDir, 'temporal-server.log'),
    log: opts.log ?? (() => undefined),
  });
  return {
    address: server.address,
    namespace: 'default',
    webUiUrl: server.webUiUrl,
    async stop() {
      await server.stop();
      fs.rmSync(logDir, { recursive: true, force: true });
    },
  };
}

export interface TestWorker {
  client: Client;
  taskQueue: string;
  store: Store;
  workers: Worker[];
  stop(): Promise<void>;
}

/** Workers of `plugin` (its pipelines, activities and workflow module) on a fresh task queue,
 * with a store in a temp directory, and a client that knows the same plugin. */
export async function startTestWorker<P extends readonly Pipeline[]>(
  server: Pick<TestServer, 'address' | 'namespace'>,
  plugin: HandrailPlugin<P>,
): Promise<TestWorker> {
  // Warnings only, unless the test process installed a Temporal runtime of its own.
  installHandrailLogger('WARN');
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'handrail-test-'));
  const taskQueue = `test-${crypto.randomUUID()}`;
  const store = await openStore({ dataDir });
  const native = await NativeConnection.connect({ address: server.address });
  const connection = await Connection.connect({ address: server.address });
  const client = new Client({ connection, namespace: server.namespace, plugins: [plugin] });
  const workers = await createHandrailWorkers({
    connection: native,
    plugin,
    config: { namespace: server.namespace, taskQueue },
    store,
    workspace: dataDir,
  });
  const running = runWorkers(workers);
  return {
    client,
    taskQueue,
    store,
    workers,
    async stop() {
      for (const worker of workers) worker.shutdown();
      await running;
      await connection.close();
      await native.close();
      await store.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Starts the job on the test worker's queue and waits for its result. */
export async function runJob(rail: Pick<TestWorker, 'client' | 'taskQueue'>, request: unknown): Promise<JobResult> {
  const { handle } = await startJob(rail.client, request, { taskQueue: rail.taskQueue });
  return handle.result();
}
