/**
 * handrail's A2A server over real HTTP, driven by the official SDK's client (and raw JSON-RPC for
 * what a client would never send), against a real worker on the suite's Temporal dev server.
 */
import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import path from 'node:path';
import { promisify } from 'node:util';
import { Role, TaskState, type Message, type StreamResponse, type Task } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUILT_IN_PIPELINES } from '../../contracts/pipelines';
import { ticketArtifactBodies } from '../../contracts/pipelines/ticket-artifacts';
import { apiUsers, sha256Token } from '../../src/servers/api-users';
import { HANDRAIL_SKILLS_EXTENSION } from '../../src/servers/a2a/agent-card';
import { buildA2aServer } from '../../src/servers/a2a/server';
import { taskIdOf } from '../../src/servers/a2a/task-messages';
import { EMPTY_WALLET } from '../helpers/handoffs-rail-api';
import { a2aClient, userMessage } from '../helpers/a2a-messages';
import { pipPackage } from '../helpers/python-temporalio';
import { jobRequest, startRail, until, type Rail } from '../helpers/rail';

/** The official Python SDK, whose client drives the server as a foreign caller. */
const PY_A2A_SDK = pipPackage({ name: 'a2a-sdk', version: '1.3.0', imports: 'a2a.client', dir: 'py-a2a-sdk' });
const PY_CLIENT = path.join(__dirname, 'fixtures', 'a2a_python_client.py');

const TOKENS = { ana: 'tok-ana-a2a-1', bob: 'tok-bob-a2a-2', ops: 'tok-ops-a2a-3' } as const;
type Caller = keyof typeof TOKENS;
const users = apiUsers({
  ana: { token_sha256: sha256Token(TOKENS.ana), role: 'user' },
  bob: { token_sha256: sha256Token(TOKENS.bob), role: 'user' },
  ops: { token_sha256: sha256Token(TOKENS.ops), role: 'root' },
});

let rail: Rail;
let app: ReturnType<typeof buildA2aServer>;
let base = '';
const clients = new Map<Caller, Client>();

beforeAll(async () => {
  rail = await startRail();
  app = buildA2aServer({
    temporal: rail.client,
    users,
    pipelines: BUILT_IN_PIPELINES,
    entrySchemas: ticketArtifactBodies,
    taskQueue: rail.taskQueue,
    store: rail.store,
  });
  base = await app.listen({ port: 0, host: '127.0.0.1' });
  for (const caller of Object.keys(TOKENS) as Caller[]) {
    clients.set(caller, await a2aClient(base, TOKENS[caller]));
  }
});

afterAll(async () => {
  await app?.close();
  await rail?.stop();
});

const as = (caller: Caller) => clients.get(caller)!;

/** A job request for the data part: the sample ticket job without the ids the server sets. */
function jobData(over: Record<string, unknown> = {}) {
  const { job_id: _id, ...request } = jobRequest();
  return { pipeline: 'ticket-triage', ...request, ...over };
}

const send = (caller: Caller, message: Message, returnImmediately = false) =>
  as(caller).sendMessage({
    tenant: '',
    message,
    configuration: { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately },
    metadata: undefined,
  });

const asTask = (result: Awaited<ReturnType<typeof send>>): Task => {
  if (!('status' in result)) throw new Error(`expected a task, got ${JSON.stringify(result)}`);
  return result;
};

const getTask = (caller: Caller, id: string) => as(caller).getTask({ tenant: '', id });

/** A raw JSON-RPC call (what no SDK client would send), its HTTP status and body. */
async function rpc(body: string, caller: Caller | null = 'ana') {
  const res = await fetch(`${base}/a2a`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'a2a-version': '1.0',
      ...(caller ? { authorization: `Bearer ${TOKENS[caller]}` } : {}),
    },
    body,
  });
  return {
    status: res.status,
    body: (await res.json()) as { error?: { code: number; message: string }; result?: unknown },
  };
}

const sendRaw = (message: unknown, caller: Caller = 'ana') =>
  rpc(JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'SendMessage', params: { message } }), caller);

const rawMessage = (data: unknown, messageId: string = crypto.randomUUID()) => ({
  messageId,
  role: 'ROLE_USER',
  parts: [{ data }],
});

async function jobExists(taskId: string): Promise<boolean> {
  try {
    await rail.client.workflow.getHandle(taskId).describe();
    return true;
  } catch {
    return false;
  }
}

async function collect(stream: AsyncGenerator<StreamResponse>): Promise<StreamResponse[]> {
  const events: StreamResponse[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

const stateOf = (event: StreamResponse) =>
  event.payload?.$case === 'task'
    ? event.payload.value.status?.state
    : event.payload?.$case === 'statusUpdate'
      ? event.payload.value.status?.state
      : undefined;

describe('A2A server', () => {
  it('publishes an agent card with each pipeline as a skill and its entry schema', async () => {
    const card = await as('ana').getAgentCard();
    expect(card.skills.map((s) => s.id)).toEqual(BUILT_IN_PIPELINES.map((p) => p.name));
    expect(card.capabilities?.streaming).toBe(true);
    const extension = card.capabilities!.extensions.find((e) => e.uri === HANDRAIL_SKILLS_EXTENSION)!;
    const triage = extension.params!.skills['ticket-triage'];
    expect(triage.entry_schema.type).toBe('object');
    expect(Object.keys(triage.entry_schema.properties)).toContain('body');
    expect(card.supportedInterfaces[0]).toMatchObject({ url: `${base}/a2a`, protocolBinding: 'JSONRPC' });
    // The card is public: no token needed.
    expect((await fetch(`${base}/.well-known/agent-card.json`)).status).toBe(200);
  });

  it('runs a job for a message: completed, acks as history, artifacts, what it spent', async () => {
    const message = userMessage(jobData());
    const task = asTask(await send('ana', message));
    expect(task.id).toBe(taskIdOf({ name: 'ana', role: 'user' }, message.messageId));
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(task.history.length).toBeGreaterThan(2);
    expect(task.history.every((m) => m.role === Role.ROLE_AGENT && m.taskId === task.id)).toBe(true);
    expect(task.artifacts.length).toBeGreaterThan(0);
    expect(task.metadata!.handrail.spent_usd).toBeGreaterThan(0);

    const got = await getTask('ana', task.id);
    expect(got.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(got.history.map((m) => m.messageId)).toEqual(task.history.map((m) => m.messageId));

    // The same message again (a retry after a timeout) answers the same task; no second job.
    const again = asTask(await send('ana', message));
    expect(again.id).toBe(task.id);
    expect(again.history.map((m) => m.messageId)).toEqual(task.history.map((m) => m.messageId));
  });

  it('starts one job for the same message sent concurrently', async () => {
    const message = userMessage(jobData());
    const tasks = (await Promise.all([1, 2, 3, 4].map(() => send('ana', message, true)))).map(asTask);
    const id = tasks[0]!.id;
    expect(new Set(tasks.map((t) => t.id))).toEqual(new Set([id]));
    await until('the job shows in visibility', async () => {
      const runs = [];
      for await (const run of rail.client.workflow.list({ query: `WorkflowId = "${id}"` })) runs.push(run);
      return runs.length > 0;
    });
    const runs = [];
    for await (const run of rail.client.workflow.list({ query: `WorkflowId = "${id}"` })) runs.push(run);
    expect(runs).toHaveLength(1);
  });

  it('streams a job: the task first, then its progress as status updates, to completion', async () => {
    const events = await collect(
      as('ana').sendMessageStream({
        tenant: '',
        message: userMessage(jobData()),
        configuration: undefined,
        metadata: undefined,
      }),
    );
    expect(events[0]!.payload?.$case).toBe('task');
    // How many hops a poll sees depends on the machine's speed; each update is news, never a repeat.
    const updates = events.filter((e) => e.payload?.$case === 'statusUpdate');
    expect(updates.length).toBeGreaterThanOrEqual(1);
    const told = updates.map((e) =>
      JSON.stringify(e.payload?.$case === 'statusUpdate' ? e.payload.value.status : null),
    );
    expect(new Set(told).size).toBe(told.length);
    expect(stateOf(events.at(-1)!)).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(events.some((e) => e.payload?.$case === 'artifactUpdate')).toBe(true);
    // One status update per ack, in the order the rail recorded them: every ack after the first
    // task event, none twice, none batched with another.
    const acksIn = (e: StreamResponse) =>
      (e.payload?.$case === 'statusUpdate' ? (e.payload.value.status?.message?.parts ?? []) : [])
        .map((p) => (p.content?.$case === 'data' ? (p.content.value as { ack?: string; delivery_key?: string }) : {}))
        .filter((d) => d.ack !== undefined);
    expect(updates.every((e) => acksIn(e).length <= 1)).toBe(true);
    const first = events[0]!.payload?.$case === 'task' ? events[0]!.payload.value : undefined;
    const job = await getTask('ana', first!.id);
    const streamed = updates.flatMap(acksIn).map((a) => `${a.delivery_key}:${a.ack}`);
    const recorded = job.history
      .slice(first!.history.length)
      .map(
        (m) =>
          m.parts.find((p) => p.content?.$case === 'data')!.content!.value as { ack: string; delivery_key: string },
      )
      .map((a) => `${a.delivery_key}:${a.ack}`);
    expect(streamed).toEqual(recorded);
  });

  it('a caller that hangs up mid-stream: the job runs on, the server keeps answering', async () => {
    const message = userMessage(jobData());
    const hangUp = new AbortController();
    const res = await fetch(`${base}/a2a`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'a2a-version': '1.0',
        accept: 'text/event-stream',
        authorization: `Bearer ${TOKENS.ana}`,
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'SendStreamingMessage',
        params: { message: { messageId: message.messageId, role: 'ROLE_USER', parts: [{ data: jobData() }] } },
      }),
      signal: hangUp.signal,
    });
    expect(res.headers.get('content-type')).toMatch(/text\/event-stream/);
    const first = await res.body!.getReader().read();
    expect(new TextDecoder().decode(first.value)).toMatch(/^data: .*"task"/);
    hangUp.abort();
    const id = taskIdOf({ name: 'ana', role: 'user' }, message.messageId);
    await until(
      'the job ends',
      async () => (await getTask('ana', id)).status?.state === TaskState.TASK_STATE_COMPLETED,
    );
  });

  it('an escalation is input-required with its options; a decision message decides it as the caller', async () => {
    const task = asTask(await send('ana', userMessage(jobData({ budget: EMPTY_WALLET }))));
    expect(task.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const options = task.status!.message!.parts.find((p) => p.content?.$case === 'data')!.content!.value as {
      decide: { actions: string[] };
    };
    expect(options.decide.actions).toContain('top_up');

    // Another caller's token finds no such task, whatever the method.
    const decision = { action: 'top_up', usd: 1, revisions: 1 };
    await expect(getTask('bob', task.id)).rejects.toThrow(/no task/);
    await expect(send('bob', userMessage(decision, { taskId: task.id }))).rejects.toThrow(/no task/);
    await expect(as('bob').cancelTask({ tenant: '', id: task.id, metadata: undefined })).rejects.toThrow(/no task/);
    await expect(collect(as('bob').resubscribeTask({ tenant: '', id: task.id }))).rejects.toThrow(/no task/);
    // Root sees every task, as for handoff records.
    expect((await getTask('ops', task.id)).status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    // An actor in the decision is refused: the actor is the caller.
    await expect(send('ana', userMessage({ ...decision, actor: 'bob' }, { taskId: task.id }))).rejects.toThrow(/actor/);
    expect((await getTask('ana', task.id)).status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);

    // Resubscribing to a task that waits for input: the task, and the stream ends.
    const waiting = await collect(as('ana').resubscribeTask({ tenant: '', id: task.id }));
    expect(waiting.map(stateOf)).toEqual([TaskState.TASK_STATE_INPUT_REQUIRED]);

    // The same decision message twice at once (a retry racing the first): one decision.
    const reply = userMessage(decision, { taskId: task.id });
    const [decided, twice] = (await Promise.all([send('ana', reply), send('ana', reply)])).map(asTask);
    expect(decided!.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(twice!.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const acks = decided!.history.map(
      (m) => m.parts.find((p) => p.content?.$case === 'data')!.content!.value as { actor?: string; stage: string },
    );
    // One decision ack, by the caller (the stage after it carries the decider as actor too).
    expect(acks.filter((a) => a.stage === 'human' && a.actor).map((a) => a.actor)).toEqual(['ana']);
    await expect(collect(as('ana').resubscribeTask({ tenant: '', id: task.id }))).rejects.toThrow(/ended/);
  });

  it('cancels a task; a second cancel is refused as not cancelable', async () => {
    const task = asTask(await send('ana', userMessage(jobData({ budget: EMPTY_WALLET }))));
    expect(task.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const cancelled = await as('ana').cancelTask({ tenant: '', id: task.id, metadata: undefined });
    expect(cancelled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    const again = await rpc(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'CancelTask', params: { id: task.id } }));
    expect(again).toMatchObject({ status: 200, body: { error: { code: -32002 } } });
  });

  describe('bad input answers JSON-RPC errors and starts nothing', () => {
    it('an unknown skill', async () => {
      const message = rawMessage(jobData({ pipeline: 'no-such-pipeline' }));
      const reply = await sendRaw(message);
      expect(reply).toMatchObject({ status: 200, body: { error: { code: -32602 } } });
      expect(reply.body.error!.message).toMatch(/unknown skill/);
      expect(await jobExists(taskIdOf({ name: 'ana', role: 'user' }, message.messageId))).toBe(false);
    });

    it("an entry that fails the pipeline's schema", async () => {
      const message = rawMessage(jobData({ ticket: undefined, entry: { subject: 42 } }));
      const reply = await sendRaw(message);
      expect(reply).toMatchObject({ status: 200, body: { error: { code: -32602 } } });
      expect(reply.body.error!.message).toMatch(/entry/);
      expect(await jobExists(taskIdOf({ name: 'ana', role: 'user' }, message.messageId))).toBe(false);
    });

    it('an oversized part', async () => {
      const message = rawMessage(jobData({ goal: 'x'.repeat(200 * 1024) }));
      const reply = await sendRaw(message);
      expect(reply).toMatchObject({ status: 200, body: { error: { code: -32602 } } });
      expect(reply.body.error!.message).toMatch(/bytes/);
      expect(await jobExists(taskIdOf({ name: 'ana', role: 'user' }, message.messageId))).toBe(false);
    });

    it('a job id or owner in the request', async () => {
      const reply = await sendRaw(rawMessage(jobData({ job_id: 'mine' })));
      expect(reply).toMatchObject({ status: 200, body: { error: { code: -32602 } } });
    });

    it('malformed JSON-RPC: bad JSON, no method, an unknown method, an unknown task', async () => {
      expect(await rpc('{"jsonrpc": "2.0", "id": 1, "method": ')).toMatchObject({
        status: 200,
        body: { error: { code: -32700 } },
      });
      expect((await rpc(JSON.stringify({ jsonrpc: '2.0', id: 2 }))).body.error?.code).toBe(-32600);
      expect(await rpc(JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'message/send', params: {} }))).toMatchObject({
        status: 200,
        body: { error: { code: -32601 } },
      });
      expect(
        await rpc(JSON.stringify({ jsonrpc: '2.0', id: 4, method: 'GetTask', params: { id: 'a2a-nothing' } })),
      ).toMatchObject({ status: 200, body: { error: { code: -32001 } } });
    });

    it('a body that is not JSON is 415, one over the limit 413, both with a JSON-RPC error', async () => {
      const post = (body: string, type: string) =>
        fetch(`${base}/a2a`, {
          method: 'POST',
          headers: { 'content-type': type, authorization: `Bearer ${TOKENS.ana}` },
          body,
        });
      const text = await post('GetTask', 'text/plain');
      expect(text.status).toBe(415);
      expect(((await text.json()) as { error: { code: number } }).error.code).toBe(-32600);
      const huge = await post(
        JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'GetTask', pad: 'x'.repeat(600_000) }),
        'application/json',
      );
      expect(huge.status).toBe(413);
      expect(((await huge.json()) as { error: { code: number } }).error.code).toBe(-32600);
    });

    it('a task id no job can have, even from root, is an unknown task (never a 5xx)', async () => {
      const reply = await rpc(
        JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: 'x'.repeat(300) } }),
        'ops',
      );
      expect(reply).toMatchObject({ status: 200, body: { error: { code: -32001 } } });
    });

    it('no token is 401', async () => {
      const reply = await rpc(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: 'x' } }), null);
      expect(reply.status).toBe(401);
      expect(reply.body.error?.code).toBe(-32600);
    });
  });
});

describe.skipIf(typeof PY_A2A_SDK === 'string')(
  `the Python a2a-sdk 1.3.0 client${typeof PY_A2A_SDK === 'string' ? ` (skipped: ${PY_A2A_SDK})` : ''}`,
  () => {
    it('sends, hears input-required, decides, gets, streams, subscribes and cancels; another caller finds nothing', async () => {
      const { python, pythonPath } = PY_A2A_SDK as Exclude<typeof PY_A2A_SDK, string>;
      const { stdout } = await promisify(execFile)(
        python,
        [PY_CLIENT, base, TOKENS.ana, JSON.stringify(jobData()), TOKENS.bob],
        { env: { ...process.env, PYTHONPATH: pythonPath }, timeout: 120_000 },
      );
      const seen = JSON.parse(stdout) as Record<string, unknown>;
      expect(seen).toMatchObject({
        send: 'TASK_STATE_INPUT_REQUIRED',
        other_get: 'TaskNotFoundError',
        decide: 'TASK_STATE_COMPLETED',
        get: 'TASK_STATE_COMPLETED',
        subscribe: ['TASK_STATE_INPUT_REQUIRED'],
        cancel: 'TASK_STATE_CANCELED',
      });
      expect(seen.options).toContain('top_up');
      expect(seen.history).toBeGreaterThan(2);
      expect(seen.artifacts).toBeGreaterThan(0);
      expect((seen.stream as string[]).at(-1)).toBe('TASK_STATE_COMPLETED');
    });
  },
);
