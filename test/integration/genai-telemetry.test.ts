/**
 * A model stage's GenAI spans composed with Temporal's OpenTelemetry interceptors
 * (`@temporalio/interceptors-opentelemetry`, through temporalTelemetry): on a real worker, the
 * stage's `invoke_agent` span is a child of Temporal's `RunActivity` span of the stage activity,
 * in the same trace, with the `chat` and `execute_tool` spans under it (and, with the workflow
 * interceptors too, `RunActivity` under the workflow's `StartActivity`); the attribute names are
 * the GenAI conventions' and handrail's. Spans go to an in-memory exporter.
 */
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { bundleWorkflowCode, DefaultLogger, NativeConnection, Worker } from '@temporalio/worker';
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterAll, afterEach, beforeAll, expect, inject, it } from 'vitest';
import { createChatModel } from '../../src/worker/model';
import { temporalTelemetry, type TemporalTelemetry } from '../../src/worker/otel';
import { openStore, type Store } from '../../src/worker/store';
import { startMcpServer, type TestMcpServer } from '../helpers/mcp-server';
import { uniqueId } from '../helpers/rail';
import { startScriptedModel, type ScriptedModel } from '../helpers/scripted-model';
import { wikiWriterScript } from '../unit/agents/helpers';
import { publishActivities } from './fixtures/agent-loop/activities';

let model: ScriptedModel;
let mcp: TestMcpServer;
let store: Store;
let connection: Connection;
let workerConnection: NativeConnection;
let telemetry: TemporalTelemetry | undefined;

beforeAll(async () => {
  mcp = await startMcpServer();
  model = await startScriptedModel(wikiWriterScript);
  store = await openStore({ sqlitePath: ':memory:' });
  connection = await Connection.connect({ address: inject('temporalAddress') });
  workerConnection = await NativeConnection.connect({ address: inject('temporalAddress') });
});
afterEach(() => telemetry?.shutdown());
afterAll(async () => {
  await mcp?.close();
  await model?.close();
  await store?.close();
  await connection?.close();
  await workerConnection?.close();
});

/** One delivery of the wiki's writer (a model stage with two MCP tool calls) on a traced worker. */
async function tracedRun(workflowSpans: boolean): Promise<{ jobId: string; spans: ReadableSpan[] }> {
  const exporter = new InMemorySpanExporter();
  telemetry = temporalTelemetry({ spanProcessor: new SimpleSpanProcessor(exporter), workflowSpans });
  const taskQueue = uniqueId('genai-telemetry');
  const { code } = await bundleWorkflowCode({
    workflowsPath: path.join(__dirname, 'fixtures', 'agent-loop', 'workflows.ts'),
    plugins: [telemetry.plugin],
    logger: new DefaultLogger('WARN'),
  });
  const worker = await Worker.create({
    connection: workerConnection,
    namespace: inject('namespace'),
    taskQueue,
    workflowBundle: { code },
    plugins: [telemetry.plugin],
    activities: publishActivities({
      store,
      model: createChatModel({
        baseUrl: model.baseUrl,
        model: 'scripted-1',
        usdPerMTokIn: 2,
        usdPerMTokOut: 10,
        timeoutMs: 5_000,
      }),
      mcpUrl: mcp.url,
    }),
  });
  const client = new Client({ connection, namespace: inject('namespace') });
  const jobId = uniqueId('genai-job');
  const result = await worker.runUntil(
    client.workflow.execute('wikiPublish', { taskQueue, workflowId: jobId, args: [jobId] }),
  );
  expect(result).toMatchObject({ posted: true });
  const spans = exporter.getFinishedSpans();
  const nameOf = (id: string | undefined) => spans.find((p) => p.spanContext().spanId === id)?.name ?? '(root)';
  console.log(`spans: ${spans.map((s) => `${s.name} <- ${nameOf(parentOf(s))}`).join('; ')}`);
  return { jobId, spans };
}

const named = (spans: ReadableSpan[], name: string) => {
  const found = spans.filter((s) => s.name === name);
  expect(
    found.map((s) => s.name),
    `one span ${name}`,
  ).toEqual([name]);
  return found[0]!;
};
const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;

/** The stage's spans: invoke_agent under RunActivity, chat and execute_tool under it, one trace. */
function expectStageUnderActivity(spans: ReadableSpan[], jobId: string): ReadableSpan {
  const runActivity = named(spans, 'RunActivity:publishNote');
  const agent = named(spans, 'invoke_agent publish');
  const chats = spans.filter((s) => s.name === 'chat scripted-1');
  const tools = spans.filter((s) => s.name.startsWith('execute_tool '));
  expect(parentOf(agent)).toBe(runActivity.spanContext().spanId);
  expect(chats).toHaveLength(3);
  expect(tools.map((s) => s.name)).toEqual(['execute_tool search', 'execute_tool post_note']);
  for (const span of [...chats, ...tools]) expect(parentOf(span)).toBe(agent.spanContext().spanId);
  expect(new Set([runActivity, agent, ...chats, ...tools].map((s) => s.spanContext().traceId)).size).toBe(1);
  expect(runActivity.attributes).toMatchObject({ temporalWorkflowId: jobId, temporalActivityId: '1' });

  expect(agent.attributes).toMatchObject({
    'gen_ai.operation.name': 'invoke_agent',
    'gen_ai.agent.name': 'publish',
    'gen_ai.conversation.id': jobId,
    'gen_ai.request.model': 'scripted-1',
    'handrail.stage': 'publish',
    'handrail.ack': 'accepted',
    'handrail.delivery_key': `${jobId}:publish:1`,
    'handrail.wallet.usd_remaining': 0.5,
    'handrail.wallet.reserved_usd': 0.01,
    'handrail.tool_calls': 2,
  });
  expect(agent.attributes['handrail.cost_usd']).toBeGreaterThan(0);
  expect(chats[0]!.attributes).toMatchObject({
    'gen_ai.operation.name': 'chat',
    'gen_ai.request.model': 'scripted-1',
    'gen_ai.usage.input_tokens': 1_000,
    'gen_ai.usage.output_tokens': 100,
  });
  expect(tools[1]!.attributes).toMatchObject({
    'gen_ai.operation.name': 'execute_tool',
    'gen_ai.tool.name': 'post_note',
    'gen_ai.tool.call.id': 'call_2',
  });
  return runActivity;
}

it("a model stage's invoke_agent span is a child of Temporal's RunActivity span, chat and execute_tool under it", async () => {
  const { jobId, spans } = await tracedRun(false);
  expectStageUnderActivity(spans, jobId);
  // Activity spans only: no workflow interceptor ran.
  expect(spans.filter((s) => /^(RunWorkflow|StartActivity):/.test(s.name))).toEqual([]);
});

it("with the workflow interceptors, Temporal's RunActivity is under the workflow's StartActivity, in the same trace", async () => {
  const { jobId, spans } = await tracedRun(true);
  const runActivity = expectStageUnderActivity(spans, jobId);
  const startActivity = named(spans, 'StartActivity:publishNote');
  expect(parentOf(runActivity)).toBe(startActivity.spanContext().spanId);
  expect(runActivity.spanContext().traceId).toBe(startActivity.spanContext().traceId);
});
