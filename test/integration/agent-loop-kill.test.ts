/**
 * A five-step tool loop in one stage activity, its worker SIGKILLed between step 3 and step 4:
 * the retried attempt, on another worker, resumes after the steps recorded under the delivery
 * key. The model endpoint (a real local OpenAI-compatible server) answers each step's request
 * once, each tool call runs once, and the wallet pays each step once — what the endpoint billed.
 * LOOP_CHECKPOINTS=off runs the same test with steps kept per attempt only: it fails.
 */
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { bundleWorkflowCode, DefaultLogger } from '@temporalio/worker';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { uniqueId } from '../helpers/rail';
import { forkWorker, said, sigkill } from '../helpers/worker-process';
import { startScriptedModel, toolResultsIn, DEFAULT_USAGE, type ScriptedModel } from '../helpers/scripted-model';
import type { LoopOutcome } from './fixtures/agent-loop/activities';

const FIXTURE = path.join(__dirname, 'fixtures', 'agent-loop');
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'handrail-agent-loop-'));
const bundlePath = path.join(dataDir, 'workflows.js');
// $1 per million prompt tokens, $10 per million completion tokens: each step costs this.
const STEP_USD = (DEFAULT_USAGE.prompt_tokens * 1 + DEFAULT_USAGE.completion_tokens * 10) / 1_000_000;

let model: ScriptedModel;
let connection: Connection;
let client: Client;
const workers: ChildProcess[] = [];

beforeAll(async () => {
  // Steps 1..4 each look one fact up; step 5 answers the brief.
  model = await startScriptedModel((request) => {
    const step = toolResultsIn(request) + 1;
    return step <= 4
      ? { toolCalls: [{ id: `call_${step}`, name: 'lookup', input: { n: step } }] }
      : { text: JSON.stringify({ title: 'Refunds', facts: ['fact 1', 'fact 2', 'fact 3', 'fact 4'] }) };
  });
  const { code } = await bundleWorkflowCode({
    workflowsPath: path.join(FIXTURE, 'workflows.ts'),
    logger: new DefaultLogger('WARN'),
  });
  fs.writeFileSync(bundlePath, code);
  connection = await Connection.connect({ address: inject('temporalAddress') });
  client = new Client({ connection, namespace: inject('namespace') });
});

afterAll(async () => {
  for (const worker of workers) if (worker.exitCode === null && worker.signalCode === null) worker.kill('SIGKILL');
  await model?.close();
  await connection?.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

/** A loop worker in its own process; resolves once it polls. */
async function startLoopWorker(taskQueue: string): Promise<{ child: ChildProcess; parked: Promise<void> }> {
  const child = await forkWorker(
    path.join(FIXTURE, 'worker.ts'),
    {
      LOOP_TASK_QUEUE: taskQueue,
      LOOP_BUNDLE: bundlePath,
      LOOP_DATA_DIR: dataDir,
      HANDRAIL_MODEL_BASE_URL: model.baseUrl,
      HANDRAIL_MODEL: 'scripted-1',
      HANDRAIL_MODEL_USD_PER_MTOK_IN: '1',
      HANDRAIL_MODEL_USD_PER_MTOK_OUT: '10',
    },
    'loop worker',
  );
  workers.push(child);
  return { child, parked: said(child, 'parked') };
}

const countsBy = (values: readonly number[]) =>
  values.reduce<Record<number, number>>((c, v) => ({ ...c, [v]: (c[v] ?? 0) + 1 }), {});

it(
  'a worker SIGKILLed mid-loop: the retry resumes after the recorded steps — each step asked, each tool run, each step paid once',
  { timeout: 120_000 },
  async () => {
    const taskQueue = uniqueId('agent-loop');
    const first = await startLoopWorker(taskQueue);
    const handle = await client.workflow.start('agentLoop', {
      taskQueue,
      workflowId: uniqueId('agent-loop-job'),
      args: [`${taskQueue}:research:1`, 1],
    });
    await first.parked;
    // Steps 1..3 are done (model replies and tool results recorded); step 4 is not yet asked.
    expect(model.requests.map(toolResultsIn)).toEqual([0, 1, 2]);
    await sigkill(first.child);

    await startLoopWorker(taskQueue);
    const outcome = (await handle.result()) as LoopOutcome;

    const toolRuns = fs.readFileSync(path.join(dataDir, 'tool-runs.log'), 'utf8').trim().split('\n').map(Number);
    const requestsPerStep = countsBy(model.requests.map((r) => toolResultsIn(r) + 1));
    const billedUsd = model.requests.length * STEP_USD;
    console.log(
      `agent loop after SIGKILL: requests per step ${JSON.stringify(requestsPerStep)}, tool runs per call ${JSON.stringify(countsBy(toolRuns))}, wallet paid $${outcome.wallet.spent_usd.toFixed(6)}, endpoint billed $${billedUsd.toFixed(6)}`,
    );
    expect(requestsPerStep).toEqual({ 1: 1, 2: 1, 3: 1, 4: 1, 5: 1 });
    expect(countsBy(toolRuns)).toEqual({ 1: 1, 2: 1, 3: 1, 4: 1 });
    expect(outcome.steps).toBe(5);
    expect(outcome.brief.facts).toHaveLength(4);
    expect(outcome.wallet.spent_usd).toBeCloseTo(5 * STEP_USD, 9);
    expect(outcome.wallet.spent_usd).toBeCloseTo(billedUsd, 9);

    // The retry was Temporal's: the first attempt timed out on its heartbeat, the second completed.
    const started = ((await handle.fetchHistory()).events ?? []).flatMap((e) =>
      e.activityTaskStartedEventAttributes ? [e.activityTaskStartedEventAttributes.attempt] : [],
    );
    expect(started).toEqual([2]);
  },
);
