/**
 * Model stages on the AI SDK against a real local OpenAI-compatible server: structured output
 * from the artifact's schema, a tool loop whose steps are recorded under the delivery key (a
 * retried attempt replays them: no request, no tool run, no second charge), and a model answer
 * that fails the schema as a typed, non-retryable stage failure.
 */
import { ApplicationFailure } from '@temporalio/common';
import { tool } from 'ai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineStage, type HandoffV1, type Message } from '../../../contracts';
import { readArtifactBody } from '../../../activities/artifacts';
import { grantedTools, runModelStage } from '../../../activities/model-stage';
import { attemptSteps, runAgent, storedSteps } from '../../../src/agents';
import type { ChatModel } from '../../../src/worker/model';
import { openStore, type Store } from '../../../src/worker/store';
import { scriptedChatModel, STEP_USD, turnFor, wikiWriter } from './helpers';
import { startScriptedModel, toolResultsIn, type ScriptedModel } from '../../helpers/scripted-model';

const Brief = z.object({ title: z.string(), facts: z.array(z.string()).min(1) });
let server: ScriptedModel;
let model: ChatModel;
let store: Store;

beforeAll(async () => {
  server = await startScriptedModel(() => ({ text: '{}' }));
  model = scriptedChatModel(server);
  store = await openStore({ sqlitePath: ':memory:' });
});
afterAll(async () => {
  await server.close();
  await store.close();
});
beforeEach(() => {
  server.requests.length = 0;
});

/** Steps 1..lookups call `lookup` with n = the step; the next step answers the brief. */
function loopOf(lookups: number) {
  server.answer = (request) => {
    const n = toolResultsIn(request) + 1;
    return n <= lookups
      ? { toolCalls: [{ id: `call_${n}`, name: 'lookup', input: { n } }] }
      : { text: JSON.stringify({ title: 'Brief', facts: ['one', 'two'] }) };
  };
}

/** `dies`: the attempt ends inside this lookup (its worker went away), as an abort would end it. */
function lookupTool(runs: number[], dies?: { at: number; attempt: AbortController }) {
  return tool({
    description: 'Looks a fact up',
    inputSchema: z.object({ n: z.number() }),
    execute: async ({ n }) => {
      runs.push(n);
      if (n === dies?.at) {
        dies.attempt.abort(new Error('worker gone'));
        throw new Error(`lookup ${n} never returned`);
      }
      return { fact: `fact ${n}` };
    },
  });
}

describe('runAgent', () => {
  it('one turn: the answer is an object of the artifact schema, priced from its usage', async () => {
    loopOf(0);
    const answer = await runAgent({
      model,
      messages: [{ role: 'user', content: 'brief me' }],
      schema: Brief,
      journal: attemptSteps(),
    });
    expect(answer.object).toEqual({ title: 'Brief', facts: ['one', 'two'] });
    expect(answer.cost_usd).toBeCloseTo(STEP_USD, 9);
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0]?.response_format).toMatchObject({ type: 'json_schema' });
  });

  it('a tool loop resumes after its recorded steps: no step is asked, run or paid twice', async () => {
    loopOf(4);
    const runs: number[] = [];
    /** One attempt of the loop under delivery key job-1:research:1. */
    const attemptLoop = async (dies?: { at: number; attempt: AbortController }) =>
      runAgent({
        model,
        messages: [{ role: 'user', content: 'research' }],
        schema: Brief,
        tools: { lookup: lookupTool(runs, dies) },
        maxSteps: 5,
        journal: await storedSteps(store, 'job-1:research:1'),
        ...(dies ? { signal: dies.attempt.signal } : {}),
      });
    // The first attempt dies in step 3's tool: steps 1 and 2 (and step 3's reply) are recorded.
    const crashed = await attemptLoop({ at: 3, attempt: new AbortController() }).catch((e: unknown) => e);
    expect(crashed).toMatchObject({ message: 'worker gone' });
    expect(server.requests.map(toolResultsIn)).toEqual([0, 1, 2]);

    const retried = await attemptLoop();
    // Each step's request reached the endpoint once; each tool call ran once but the crashed one.
    expect(server.requests.map(toolResultsIn)).toEqual([0, 1, 2, 3, 4]);
    expect(runs).toEqual([1, 2, 3, 3, 4]);
    expect(retried.steps).toHaveLength(5);
    expect(retried.cost_usd).toBeCloseTo(5 * STEP_USD, 9);

    // A third attempt (a completed loop retried) asks nothing and runs nothing.
    const again = await attemptLoop();
    expect(server.requests).toHaveLength(5);
    expect(runs).toHaveLength(5);
    expect(again.object).toEqual(retried.object);
    expect(again.cost_usd).toBe(retried.cost_usd);
  });
});

describe('runModelStage', () => {
  const pkg = { job_id: 'job-2', constraints: [] } as unknown as HandoffV1;
  const researcher = defineStage({
    name: 'research',
    accepts: ['question.v1'],
    outputs: ['brief.v1'],
    criteria: ['cites what it looked up'],
    nominalCostUsd: 0.01,
    tools: [{ name: 'lookup', access: 'read', system: 'wiki', usdPerCall: 0.001 }],
  });
  it('emits the artifact, and records the tool calls and results in the turn', async () => {
    loopOf(2);
    const replies: Message[] = [];
    const runs: number[] = [];
    const output = await runModelStage(store, model, pkg, turnFor('job-2:research:1', replies), {
      card: researcher,
      question: 'research',
      output: { type: 'brief.v1', schema: Brief },
      tools: { lookup: lookupTool(runs) },
      maxSteps: 3,
    });
    expect(output.artifact.type).toBe('brief.v1');
    expect(await readArtifactBody(store, output.artifact, Brief)).toEqual({ title: 'Brief', facts: ['one', 'two'] });
    // Three model steps, and two lookups at the card's $0.001 a call.
    expect(output.cost_usd).toBeCloseTo(3 * STEP_USD + 2 * 0.001, 9);
    expect(output.tools_tried).toEqual([
      { name: 'lookup', ok: true },
      { name: 'lookup', ok: true },
    ]);
    expect(replies.map((m) => m.content[0]?.type)).toEqual([
      'tool_use',
      'tool_result',
      'tool_use',
      'tool_result',
      'text',
    ]);
  });

  it('a model answer that fails the artifact schema is a typed, non-retryable failure', async () => {
    server.answer = () => ({ text: JSON.stringify({ title: 'Brief', facts: [] }) });
    const failure = await runModelStage(store, model, pkg, turnFor('job-2:research:2', []), {
      card: researcher,
      question: 'research',
      output: { type: 'brief.v1', schema: Brief },
    }).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(ApplicationFailure);
    expect(failure).toMatchObject({ type: 'ModelOutputInvalid', nonRetryable: true });
  });

  it("stops before a step that could break the hop's reservation, without asking the model", async () => {
    loopOf(4);
    // Each step costs $0.003 and each lookup $0.001; a step's worst case is its prompt plus 100
    // output tokens ($0.001). After two steps $0.008 is spent: a third could pass $0.0085.
    const capped = defineStage({ ...researcher, worstCaseCostUsd: 0.0085 });
    const failure = await runModelStage(store, model, pkg, turnFor('job-2:research:4'), {
      card: capped,
      question: 'research',
      output: { type: 'brief.v1', schema: Brief },
      tools: { lookup: lookupTool([]) },
      maxSteps: 5,
      maxOutputTokens: 100,
    }).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(ApplicationFailure);
    expect(failure).toMatchObject({ type: 'ReservationExhausted', nonRetryable: true });
    // (toMatchObject does not compare an Error's message: it is asserted on its own.)
    expect((failure as Error).message).toMatch(/step 3 could cost/);
    expect(server.requests).toHaveLength(2);
  });

  it("stops before a step whose prompt could pass the stage's maxPromptTokens (the bound its worst case assumes)", async () => {
    loopOf(4);
    const failure = await runModelStage(store, model, pkg, turnFor('job-2:research:5'), {
      card: researcher,
      question: 'research',
      output: { type: 'brief.v1', schema: Brief },
      tools: { lookup: lookupTool([]) },
      maxSteps: 5,
      // The question alone is well under 100 tokens; with a tool call and its result it is not.
      maxPromptTokens: 100,
    }).catch((e: unknown) => e);
    expect(failure).toMatchObject({ type: 'ReservationExhausted', nonRetryable: true });
    expect((failure as Error).message).toMatch(
      /step 2's prompt could be \d+ tokens: over the stage's maxPromptTokens of 100/,
    );
    expect(server.requests).toHaveLength(1);
  });

  it('offers the model only the tools its card grants, and makes a write tool with the write-once key', async () => {
    const refused = await runModelStage(store, model, pkg, turnFor('job-2:research:3', []), {
      card: researcher,
      question: 'research',
      output: { type: 'brief.v1', schema: Brief },
      tools: { lookup: lookupTool([]), post_note: lookupTool([]) },
      maxSteps: 3,
    }).catch((e: unknown) => e);
    expect((refused as Error).message).toMatch(/offers its model tool "post_note", which its card does not grant/);
    expect(server.requests).toHaveLength(0);

    const writer = wikiWriter([
      { name: 'lookup', access: 'read', system: 'wiki' },
      { name: 'post_note', access: 'write', system: 'wiki' },
    ]);
    const keys: (string | null)[] = [];
    grantedTools(writer, pkg, {
      lookup: ({ writeKey }) => (keys.push(writeKey), lookupTool([])),
      post_note: ({ writeKey }) => (keys.push(writeKey), lookupTool([])),
    });
    expect(keys).toEqual([null, 'job-2:publish:receipt.v1']);
  });
});
