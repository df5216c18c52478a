/**
 * `npm run record-histories [-- scenario ...]`: runs every scenario (test/scenarios.ts)
 * on a throwaway dev server with the production worker and stages, and writes
 * test/histories/<scenario>.json (the history, for the replay suite) and
 * test/histories/results/<scenario>.json (the normalized result, for the results test).
 * Fixtures of scenarios no longer listed are left alone: old histories stay replayable on purpose.
 */
import { handrailLogger } from '../src/worker/logger';
import { BUILT_IN_WORKFLOWS, builtInPlugin } from '../src/pipelines';
import { BUILT_IN_PIPELINES } from '../contracts/pipelines';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { codeRoot } from '../src/config';
import { ensureDevServer, freePort } from '../src/devtools/devserver/server';
import { SCENARIOS, normalizeResult, type Scenario } from '../test/scenarios';
import { openStore } from '../src/worker/store';
import { handrailDataConverter } from '../src/codec';
import { createHandrailWorkers, runWorkers, workflowRuntime } from '../src/worker/worker';
import { RESULTS_DIR, historyFile, resultFile } from './replay/histories';
import { bundleRail } from '../src/worker/bundle';

const TASK_QUEUE = 'record-histories';

async function main(): Promise<void> {
  const wanted = process.argv.slice(2);
  const unknown = wanted.filter((w) => !SCENARIOS.some((s) => s.name === w));
  if (unknown.length > 0)
    throw new Error(`unknown scenario ${unknown.join(', ')}; known: ${SCENARIOS.map((s) => s.name).join(', ')}`);
  const scenarios = wanted.length > 0 ? SCENARIOS.filter((s) => wanted.includes(s.name)) : SCENARIOS;

  Runtime.install({ logger: handrailLogger() });
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'handrail-record-'));
  // In-memory history on free ports: recording never touches a developer's server or data.
  const server = await ensureDevServer({
    port: await freePort(),
    uiPort: await freePort(),
    logFile: path.join(tmp, 'temporal-server.log'),
  });
  const store = await openStore({ dataDir: tmp });
  const nativeConnection = await NativeConnection.connect({ address: server.address });
  const connection = await Connection.connect({ address: server.address });
  // Fixtures are recorded as the worker writes them: encrypted when codec keys are configured.
  const dataConverter = handrailDataConverter();
  const client = new Client({ connection, namespace: 'default', dataConverter });
  try {
    // One bundle runs the scenarios and checks their histories replay on the code that made them.
    const workflowBundle = await bundleRail(
      BUILT_IN_WORKFLOWS.workflowsPath,
      undefined,
      BUILT_IN_WORKFLOWS.preloadModules,
    );
    const startWorkers = async (taskQueue: string, scenario?: Scenario) => {
      const workers = await createHandrailWorkers({
        connection: nativeConnection,
        plugin: builtInPlugin({ dataConverter }),
        config: { namespace: 'default', taskQueue },
        store,
        workflowBundle,
        ...(scenario?.activities ? { overrideActivities: scenario.activities } : {}),
      });
      return { workers, running: runWorkers(workers) };
    };
    const stopWorkers = async ({ workers, running }: Awaited<ReturnType<typeof startWorkers>>) => {
      for (const w of workers) w.shutdown();
      await running;
    };
    const production = await startWorkers(TASK_QUEUE);
    try {
      fs.mkdirSync(RESULTS_DIR, { recursive: true });
      for (const scenario of scenarios) {
        const started = Date.now();
        // A fixed job id keeps re-recorded fixtures diffable; the server is fresh, so it is new.
        const jobId = `rec-${scenario.name}`;
        // A scenario that holds a stage gets workers of its own, on a queue of its own.
        const taskQueue = scenario.activities ? `${TASK_QUEUE}-${scenario.name}` : TASK_QUEUE;
        const own = scenario.activities ? await startWorkers(taskQueue, scenario) : undefined;
        let run: Awaited<ReturnType<Scenario['run']>>;
        try {
          run = await scenario.run({ client, taskQueue, pipelines: BUILT_IN_PIPELINES, store }, jobId);
        } finally {
          if (own) await stopWorkers(own);
        }
        const { workflowId, result } = run;
        const mismatch = scenario.check(result);
        if (mismatch)
          throw new Error(`${scenario.name}: the run is not the scenario (${mismatch}); nothing written for it`);
        const history = await client.workflow.getHandle(workflowId).fetchHistory();
        try {
          await Worker.runReplayHistory({ ...workflowRuntime(dataConverter), workflowBundle }, history, workflowId);
        } catch (err) {
          throw new Error(
            `${scenario.name}: the history does not replay on the code that recorded it, so it is no fixture: ${(err as Error).message}`,
          );
        }
        fs.writeFileSync(historyFile(scenario.name), `${historyToJSON(history)}\n`);
        fs.writeFileSync(resultFile(scenario.name), `${JSON.stringify(normalizeResult(result, jobId), null, 2)}\n`);
        const seconds = ((Date.now() - started) / 1000).toFixed(1);
        console.log(
          `${scenario.name.padEnd(26)} ${String(history.events?.length ?? 0).padStart(3)} events  ${seconds.padStart(5)} s  ${scenario.summary}`,
        );
      }
    } finally {
      await stopWorkers(production);
    }
    console.log(`wrote ${scenarios.length} histories to ${path.relative(codeRoot, path.dirname(historyFile('x')))}/`);
  } finally {
    await connection.close();
    await nativeConnection.close();
    await store.close();
    await server.stop();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

main().catch((err: Error) => {
  console.error(err.message);
  process.exit(1);
});
