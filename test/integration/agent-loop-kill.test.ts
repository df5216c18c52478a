/**
 * A five-step tool loop in one stage activity, its worker SIGKILLed between step 3 and step 4:
 * the retried attempt, on another worker, resumes after the steps recorded under the delivery
 * key. The model endpoint (a real local OpenAI-compatible server) answers each step's request
 * once, each tool call runs once, and the wallet pays each step once — what the endpoint billed.
 * LOOP_CHECKPOINTS=off runs the same test with steps kept per attempt only: it fails.
 *
 * The wiki's writer, a model stage posting a note through a real MCP server (streamable HTTP)
 * that writes once per idempotency key, is retried twice over: after its write returned (the
 * retry replays the write's recorded result: the server is not called again), and with its
 * worker SIGKILLed while the write was in flight (the retry calls again with the same
 * write-once key, and the server keeps its one note).
 */
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import { bundleWorkflowCode, DefaultLogger } from '@temporalio/worker';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { startMcpServer, type TestMcpServer } from '../helpers/mcp-server';
import { uniqueId } from '../helpers/rail';
import { forkWorker, said, sigkill } from '../helpers/worker-process';
import { wikiWriterScript, wikiWriterStep } from '../unit/agents/helpers';
import { startScriptedModel, toolResultsIn, DEFAULT_USAGE, type ScriptedModel } from '../helpers/scripted-model';
import type { LoopOutcome, PublishResult } from './fixtures/agent-loop/activities';

const FIXTURE = path.join(__dirname, 'fixtures', 'agent-loop');
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'handrail-agent-loop-'));
const bundlePath = path.join(dataDir, 'workflows.js');
// $1 per million prompt tokens, $10 per million completion tokens: each step costs this.
const STEP_USD = (DEFAULT_USAGE.prompt_tokens * 1 + DEFAULT_USAGE.completion_tokens * 10) / 1_000_000;

let model: ScriptedModel;
let mcp: TestMcpServer;
let connection: Connection;
let client: Client;
const workers: ChildProcess[] = [];

beforeAll(async () => {
  mcp = await startMcpServer();
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
  await mcp?.close();
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
      LOOP_MCP_URL: mcp.url,
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

/** The attempt of each activity start in the job's history (a retried activity's last start only). */
const startedAttempts = async (handle: WorkflowHandle) =>
  ((await handle.fetchHistory()).events ?? []).flatMap((e) =>
    e.activityTaskStartedEventAttributes ? [e.activityTaskStartedEventAttributes.attempt] : [],
  );

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
    expect(await startedAttempts(handle)).toEqual([2]);
  },
);

/** What the wiki's MCP server saw of one job's writer: its write calls, and the notes written. */
function wikiWrites(jobId: string, notesBefore: number) {
  const key = `${jobId}:publish:receipt.v1`;
  return {
    key,
    postCalls: mcp.calls.filter((c) => c.tool === 'post_note').slice(-2),
    notesWritten: mcp.notes.size - notesBefore,
    note: mcp.notes.get(key),
  };
}

it(
  "a writer's attempt failing after its MCP write returned: the retry replays the write's result, the server is called once",
  { timeout: 60_000 },
  async () => {
    const taskQueue = uniqueId('wiki-writer');
    const worker = await startLoopWorker(taskQueue);
    model.requests.length = 0;
    const notesBefore = mcp.notes.size;
    let failed = false;
    // Step 3's first request fails (a 503): the attempt fails after the note was posted.
    model.answer = (request) => {
      const step = toolResultsIn(request) + 1;
      if (step === 3 && !failed) return ((failed = true), { failure: 503 });
      return wikiWriterStep(step);
    };
    const jobId = uniqueId('wiki-job');
    const handle = await client.workflow.start('wikiPublish', { taskQueue, workflowId: jobId, args: [jobId] });
    const result = (await handle.result()) as PublishResult;

    const seen = wikiWrites(jobId, notesBefore);
    expect(result.posted).toBe(true);
    expect(mcp.calls.filter((c) => c.key === seen.key)).toEqual([{ tool: 'post_note', key: seen.key }]);
    expect(seen.notesWritten).toBe(1);
    expect(seen.note).toBe('Refunds: 30 days');
    // Steps 1 and 2 asked once, step 3 twice (the 503, then its answer on the retried attempt).
    expect(countsBy(model.requests.map((r) => toolResultsIn(r) + 1))).toEqual({ 1: 1, 2: 1, 3: 2 });
    expect(await startedAttempts(handle)).toEqual([2]);
    await sigkill(worker.child);
  },
);

it(
  "a writer's worker SIGKILLed while its MCP write is in flight: the retry writes again under the same write-once key, and the server writes once",
  { timeout: 60_000 },
  async () => {
    const taskQueue = uniqueId('wiki-writer');
    const first = await startLoopWorker(taskQueue);
    model.requests.length = 0;
    model.answer = wikiWriterScript;
    const notesBefore = mcp.notes.size;
    const jobId = uniqueId('wiki-job');
    // The server writes the note, then holds its answer: the worker dies before it hears back.
    const written = new Promise<string>((resolve) => {
      mcp.afterWrite = (key) => (resolve(key), new Promise<void>(() => undefined));
    });
    const handle = await client.workflow.start('wikiPublish', { taskQueue, workflowId: jobId, args: [jobId] });
    expect(await written).toBe(`${jobId}:publish:receipt.v1`);
    delete mcp.afterWrite;
    await sigkill(first.child);

    await startLoopWorker(taskQueue);
    const result = (await handle.result()) as PublishResult;
    const seen = wikiWrites(jobId, notesBefore);
    console.log(
      `wiki writer after SIGKILL mid-write: post_note calls ${JSON.stringify(seen.postCalls)}, notes written ${seen.notesWritten}`,
    );
    expect(result.posted).toBe(true);
    // The retried attempt replayed steps 1 and 2 (search and the model's post_note call), so the
    // only call made again is the write whose answer was lost, under the same key.
    expect(seen.postCalls).toEqual([
      { tool: 'post_note', key: seen.key },
      { tool: 'post_note', key: seen.key },
    ]);
    expect(seen.notesWritten).toBe(1);
    expect(seen.note).toBe('Refunds: 30 days');
    expect(countsBy(model.requests.map((r) => toolResultsIn(r) + 1))).toEqual({ 1: 1, 2: 1, 3: 1 });
  },
);
