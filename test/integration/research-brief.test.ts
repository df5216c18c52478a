/**
 * research-brief end to end on the real dev server: a scripted OpenAI-compatible model server
 * (a real local HTTP server) answers the four model stages, the researcher searches through its
 * own MCP server (started over stdio per delivery), and the writer writes the brief once.
 */
import { TaskState, type StreamResponse } from '@a2a-js/sdk';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { BUILT_IN_PIPELINES } from '../../contracts/pipelines';
import { HttpAgent } from '@ag-ui/client';
import { buildHandoffsApi } from '../../src/servers/handoffs-api';
import { apiUsers, sha256Token } from '../../src/servers/api-users';
import { a2aServerFor, userMessage } from '../helpers/a2a-messages';
import { startJob } from '../../src/operator/client';
import { followJob } from '../../src/stream/follow';
import type { JobEvent } from '../../src/stream/events';
import { startResearchModel } from '../../src/devtools/research-model';
import type { ScriptedModel } from '../helpers/scripted-model';
import { jobRequest, startRail, uniqueId, type Rail } from '../helpers/rail';

let model: ScriptedModel;
let rail: Rail;
beforeAll(async () => {
  model = await startResearchModel();
  // The worker's model is read from the environment when its workers are created.
  Object.assign(process.env, {
    HANDRAIL_MODEL_BASE_URL: model.baseUrl,
    HANDRAIL_MODEL: 'research-offline',
    HANDRAIL_MODEL_USD_PER_MTOK_IN: '1',
    HANDRAIL_MODEL_USD_PER_MTOK_OUT: '4',
  });
  rail = await startRail();
});
afterAll(async () => {
  await rail?.stop();
  await model?.close();
});

it(
  'plans, researches through its MCP search tool, passes the critic and writes the brief once',
  { timeout: 60_000 },
  async () => {
    const request = { ...jobRequest({ job_id: uniqueId('brief') }), pipeline: 'research-brief' };
    const { handle } = await startJob(rail.client, request, rail);
    const result = await handle.result();

    expect(result.status).toBe('completed');
    expect(result.acks.map((a) => `${a.stage}:${a.ack}`)).toEqual([
      'planner:accepted',
      'researcher:accepted',
      'critic:accepted',
      'writer:accepted',
    ]);
    // planner 1 turn, researcher 2 steps (searches, then notes), critic 1, writer 1.
    expect(model.requests).toHaveLength(5);
    expect(model.requests[1]!.tools?.map((t) => t.function.name)).toEqual(['search']);
    const searched = model.requests[2]!.messages.filter((m) => m.role === 'tool');
    expect(searched.length).toBeGreaterThan(0);
    expect(searched.map((m) => m.content).join('\n')).toContain('policy/refunds#duplicate-charges');
    expect(result.receipt).toMatchObject({
      write_key: `${request.job_id}:writer:brief.v1`,
      system: 'briefs',
      reference: `briefs/${request.job_id}`,
      status: 'created',
    });
    const writes = await rail.store.listWrites(request.job_id);
    expect(writes).toHaveLength(1);
    expect(result.spent_usd).toBeGreaterThan(0);
  },
);

it(
  "a follower sees each model stage's text while it works: its deltas come after the hop's start and before its finish, and together they are the model's answer",
  { timeout: 60_000 },
  async () => {
    const request = { ...jobRequest({ job_id: uniqueId('brief-follow') }), pipeline: 'research-brief' };
    const asked = model.requests.length;
    await startJob(rail.client, request, rail);
    const events: JobEvent[] = [];
    for await (const item of followJob(rail.client, request.job_id, { store: rail.store }))
      if (item.kind === 'event') events.push(item.event);
    expect(events.at(-1)).toMatchObject({ type: 'job_finished', status: 'completed' });
    const texts = new Map<string, string>();
    for (const e of events) {
      if (e.type !== 'text_delta') continue;
      const started = events.findIndex((s) => s.type === 'hop_started' && s.hop === e.hop && s.stage === e.stage);
      const finished = events.findIndex((s) => s.type === 'hop_finished' && s.hop === e.hop);
      const at = events.indexOf(e);
      expect([started >= 0 && started < at, finished > at], `${e.stage} hop ${e.hop}`).toEqual([true, true]);
      texts.set(e.stage, (texts.get(e.stage) ?? '') + e.delta);
    }
    expect([...texts.keys()].sort()).toEqual(['critic', 'planner', 'researcher', 'writer']);
    // The researcher's searches: each call starts and ends inside its hop, its arguments not shown
    // (the card does not grant `search` with showArguments).
    const calls = events.filter((e) => e.type === 'tool_call');
    expect(calls.length).toBeGreaterThan(0);
    for (const call of calls) {
      expect([call.stage, call.name, call.args]).toEqual(['researcher', 'search', undefined]);
      const finished = events.findIndex((s) => s.type === 'hop_finished' && s.hop === call.hop);
      expect(events.indexOf(call)).toBeLessThan(finished);
    }
    const ids = (phase: string) => calls.flatMap((c) => (c.phase === phase ? [c.call_id] : []));
    expect(ids('end')).toEqual(ids('start'));
    expect(calls.filter((c) => c.phase === 'end').every((c) => c.ok === true)).toBe(true);
    // What the model answered, as the scripted server saw each request answered (its last step's text).
    const answers = model.requests.slice(asked).map((r) => model.answer(r));
    for (const [stage, text] of texts)
      expect(
        answers.some((a) => 'text' in a && text.endsWith(a.text)),
        `${stage}: ${text.slice(0, 80)}`,
      ).toBe(true);
  },
);

it(
  "a streaming A2A client gets each model stage's text as artifact chunks while it works, before the task completes",
  { timeout: 60_000 },
  async () => {
    const a2a = await a2aServerFor(rail, 'tok-a2a-brief');
    try {
      const client = a2a.client;
      const { job_id: _id, ...request } = jobRequest();
      const events: StreamResponse[] = [];
      for await (const e of client.sendMessageStream({
        tenant: '',
        message: userMessage({ ...request, pipeline: 'research-brief' }),
        configuration: undefined,
        metadata: undefined,
      }))
        events.push(e);
      const chunks = events.flatMap((e, at) =>
        e.payload?.$case === 'artifactUpdate' && e.payload.value.artifact?.artifactId.startsWith('text-hop-')
          ? [{ at, id: e.payload.value.artifact.artifactId, name: e.payload.value.artifact.name, e: e.payload.value }]
          : [],
      );
      const last = events.at(-1)!;
      expect(last.payload?.$case === 'statusUpdate' && last.payload.value.status?.state).toBe(
        TaskState.TASK_STATE_COMPLETED,
      );
      expect([...new Set(chunks.map((c) => c.name))].sort()).toEqual([
        'critic text',
        'planner text',
        'researcher text',
        'writer text',
      ]);
      // Each hop's text: a first chunk, appended to, closed by a last chunk; all before the ending.
      for (const id of new Set(chunks.map((c) => c.id))) {
        const mine = chunks.filter((c) => c.id === id);
        expect(mine.map((c) => c.e.append)).toEqual([false, ...mine.slice(1).map(() => true)]);
        expect(mine.map((c) => c.e.lastChunk)).toEqual([...mine.slice(1).map(() => false), true]);
        expect(mine.at(-1)!.at).toBeLessThan(events.length - 1);
      }
    } finally {
      await a2a.close();
    }
  },
);

it(
  "an @ag-ui/client HttpAgent follows a model job with tool calls: its messages hold each stage's text and the search calls",
  { timeout: 60_000 },
  async () => {
    const token = 'tok-agui-brief';
    const api = buildHandoffsApi({
      store: rail.store,
      users: apiUsers({ ana: { token_sha256: sha256Token(token), role: 'user' } }),
      temporal: rail.client,
      workspaces: { [rail.client.options.namespace]: BUILT_IN_PIPELINES.map((p) => p.name) },
    });
    const base = await api.listen({ port: 0, host: '127.0.0.1' });
    try {
      const request = { ...jobRequest({ job_id: uniqueId('brief-agui') }), pipeline: 'research-brief' };
      await startJob(rail.client, request, rail);
      const agent = new HttpAgent({
        url: `${base}/jobs/${request.job_id}/events`,
        headers: { authorization: `Bearer ${token}` },
      });
      const { result } = await agent.runAgent({});
      expect(result).toMatchObject({ status: 'completed' });
      const calls = agent.messages.flatMap((m) => (m.role === 'assistant' ? (m.toolCalls ?? []) : []));
      expect(calls.length).toBeGreaterThan(0);
      expect(new Set(calls.map((c) => c.function.name))).toEqual(new Set(['search']));
      const results = agent.messages.filter((m) => m.role === 'tool');
      expect(results.map((m) => m.toolCallId).sort()).toEqual(calls.map((c) => c.id).sort());
      const text = agent.messages
        .map((m) => (m.role === 'assistant' && typeof m.content === 'string' ? m.content : ''))
        .join('');
      expect(text.length).toBeGreaterThan(0);
    } finally {
      await api.close();
    }
  },
);

it("a model job nobody followed while it ran reads in the job's order afterwards: its start first, each hop's text inside its hop, hops in order", async () => {
  const request = { ...jobRequest({ job_id: uniqueId('brief-later') }), pipeline: 'research-brief' };
  const { handle } = await startJob(rail.client, request, rail);
  expect((await handle.result()).status).toBe('completed');
  const events: JobEvent[] = [];
  for await (const item of followJob(rail.client, request.job_id, { store: rail.store }))
    if (item.kind === 'event') events.push(item.event);

  expect(events[0]!.type).toBe('job_started');
  const starts = events.flatMap((e) => (e.type === 'hop_started' ? [e.hop] : []));
  expect(starts).toEqual([...starts].sort((a, b) => a - b));
  const inHops = events.filter((x) => x.type === 'text_delta' || x.type === 'tool_call');
  // Read afterwards, each model stage's text is there to be placed.
  expect([...new Set(inHops.flatMap((x) => (x.type === 'text_delta' ? [x.stage] : [])))].sort()).toEqual([
    'critic',
    'planner',
    'researcher',
    'writer',
  ]);
  for (const e of inHops) {
    const at = events.indexOf(e);
    const hop = 'hop' in e ? e.hop : -1;
    const started = events.findIndex((s) => s.type === 'hop_started' && s.hop === hop);
    const finished = events.findIndex((s) => s.type === 'hop_finished' && s.hop === hop);
    // The hop before it (every hop but the first has one) has finished before this hop's text.
    const before = events.findIndex((s) => s.type === 'hop_finished' && s.hop === hop - 1);
    expect(
      [started >= 0 && started < at, at < finished, (hop === starts[0] || before >= 0) && before < at],
      `${e.type} of hop ${hop}`,
    ).toEqual([true, true, true]);
  }
});
