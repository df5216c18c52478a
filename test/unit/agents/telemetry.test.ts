/**
 * A model stage's spans follow the GenAI semantic conventions: one `invoke_agent` per hop, a
 * `chat` per model call and an `execute_tool` per tool call under it, with `gen_ai.*` names
 * (checked by an in-memory exporter) and handrail's stage, cost and replay flags beside them.
 */
import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { z } from 'zod';
import { defineStage, type HandoffV1 } from '../../../contracts';
import { runModelStage } from '../../../activities/model-stage';
import { tool } from 'ai';
import type { ChatModel } from '../../../src/worker/model';
import { openStore, type Store } from '../../../src/worker/store';
import { startScriptedModel, toolResultsIn, type ScriptedModel } from '../../helpers/scripted-model';
import { scriptedChatModel, STEP_USD, turnFor } from './helpers';

const exporter = new InMemorySpanExporter();
let server: ScriptedModel;
let model: ChatModel;
let store: Store;

beforeAll(async () => {
  // What a Node process's OpenTelemetry setup installs: the active span follows async calls.
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }));
  server = await startScriptedModel((request) =>
    toolResultsIn(request) === 0
      ? { toolCalls: [{ id: 'call_1', name: 'lookup', input: { n: 1 } }] }
      : { text: JSON.stringify({ facts: ['fact 1'] }) },
  );
  model = scriptedChatModel(server);
  store = await openStore({ sqlitePath: ':memory:' });
});
afterAll(async () => {
  await server.close();
  await store.close();
  trace.disable();
  context.disable();
});

it('one invoke_agent per hop, with a chat per model call and an execute_tool per tool call under it', async () => {
  const card = defineStage({
    name: 'research',
    accepts: ['question.v1'],
    outputs: ['brief.v1'],
    criteria: ['cites what it looked up'],
    nominalCostUsd: 0.01,
    tools: [{ name: 'lookup', access: 'read', system: 'wiki' }],
  });
  const lookup = tool({
    inputSchema: z.object({ n: z.number() }),
    execute: async ({ n }) => ({ fact: `fact ${n}` }),
  });
  const pkg = { job_id: 'job-9', constraints: [], hop: { count: 2 } } as unknown as HandoffV1;
  await runModelStage(store, model, pkg, turnFor('job-9:research:2'), {
    card,
    question: 'research',
    output: { type: 'brief.v1', schema: z.object({ facts: z.array(z.string()) }) },
    tools: { lookup },
    maxSteps: 2,
  });

  const spans = exporter.getFinishedSpans();
  expect(spans.map((s) => s.name)).toEqual([
    'chat scripted-1',
    'execute_tool lookup',
    'chat scripted-1',
    'invoke_agent research',
  ]);
  const agent = spans.at(-1)!;
  expect(agent.attributes).toMatchObject({
    'gen_ai.operation.name': 'invoke_agent',
    'gen_ai.agent.name': 'research',
    'gen_ai.conversation.id': 'job-9',
    'gen_ai.request.model': 'scripted-1',
    'handrail.stage': 'research',
    'handrail.hop': 2,
    'handrail.tool_calls': 1,
  });
  expect(agent.attributes['handrail.cost_usd']).toBeCloseTo(2 * STEP_USD, 9);
  expect(spans[0]!.attributes).toMatchObject({
    'gen_ai.operation.name': 'chat',
    'gen_ai.request.model': 'scripted-1',
    'gen_ai.usage.input_tokens': 1_000,
    'gen_ai.usage.output_tokens': 100,
    'gen_ai.response.finish_reasons': ['tool-calls'],
    'handrail.step_replayed': false,
  });
  expect(spans[1]!.attributes).toMatchObject({
    'gen_ai.operation.name': 'execute_tool',
    'gen_ai.tool.name': 'lookup',
    'gen_ai.tool.call.id': 'call_1',
  });
  const agentId = agent.spanContext().spanId;
  expect(spans.slice(0, 3).map((s) => s.parentSpanContext?.spanId)).toEqual([agentId, agentId, agentId]);
});
