/**
 * Following a job while it works (src/stream): the client API (`followJob`) and the API server's
 * `GET /jobs/{id}/events` (AG-UI over SSE), followed by an `@ag-ui/client` HttpAgent — not
 * handrail's code. Ids only grow, a finished job reads the same from the first id, a follower
 * resuming from an id gets exactly the rest, the owner scope and bad ids answer as the records
 * API does, and nothing a process writes into the journal is shown as the rail's.
 */
import { HttpAgent, type BaseEvent } from '@ag-ui/client';
import { Client } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handrailDataConverter } from '../../src/codec';
import { jobResult, startJob } from '../../src/operator/client';
import { apiUsers, sha256Token } from '../../src/servers/api-users';
import { buildHandoffsApi } from '../../src/servers/handoffs-api';
import { followJob, type FollowItem } from '../../src/stream/follow';
import type { JobEvent } from '../../src/stream/events';
import { BUILT_IN_PIPELINES } from '../../contracts/pipelines';
import { jobRequest, startRail, type Rail } from '../helpers/rail';

const TOKENS = { ana: 'tok-ana-follow', bob: 'tok-bob-follow' } as const;
const users = apiUsers({
  ana: { token_sha256: sha256Token(TOKENS.ana), role: 'user' },
  bob: { token_sha256: sha256Token(TOKENS.bob), role: 'user' },
});

let rail: Rail;
let app: ReturnType<typeof buildHandoffsApi>;
let base: string;

beforeAll(async () => {
  rail = await startRail();
  app = buildHandoffsApi({
    store: rail.store,
    users,
    temporal: rail.client,
    workspaces: { [rail.client.options.namespace]: BUILT_IN_PIPELINES.map((p) => p.name) },
  });
  base = await app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => {
  await app?.close();
  await rail?.stop();
});

async function collect(jobId: string, from = 0): Promise<{ events: JobEvent[]; states: number }> {
  const events: JobEvent[] = [];
  let states = 0;
  for await (const item of followJob(rail.client, jobId, { from, store: rail.store }) as AsyncGenerator<FollowItem>) {
    if (item.kind === 'event') events.push(item.event);
    else states++;
  }
  return { events, states };
}

/** The SSE stream of a job as raw frames (id and parsed data), read to its end. */
async function sse(jobId: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${base}/jobs/${jobId}/events`, {
    headers: { authorization: `Bearer ${TOKENS.ana}`, ...headers },
  });
  if (res.status !== 200) return { status: res.status, body: (await res.json()) as { error: string }, frames: [] };
  const text = await res.text();
  const frames = text
    .split('\n\n')
    .filter((f) => f.trim() !== '')
    .map((f) => {
      const id = /^id: (\d+)$/m.exec(f)?.[1];
      const data = /^data: (.*)$/m.exec(f)![1]!;
      return {
        id: id === undefined ? undefined : Number(id),
        event: JSON.parse(data) as BaseEvent & Record<string, unknown>,
      };
    });
  return { status: 200, body: { error: '' }, frames };
}

describe('following a job (client API)', () => {
  it('a job followed from its start: ids only grow; it starts, each worked hop starts, is acked and finishes, and it ends completed', async () => {
    const request = jobRequest();
    await startJob(rail.client, request, { taskQueue: rail.taskQueue });
    const { events, states } = await collect(request.job_id);
    const ids = events.map((e) => e.id);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(new Set(ids).size).toBe(ids.length);
    expect(events[0]!.type).toBe('job_started');
    expect(events.at(-1)).toMatchObject({ type: 'job_finished', status: 'completed' });
    expect(states).toBeGreaterThan(0);
    const result = await jobResult(rail.client, request.job_id);
    const acks = events.flatMap((e) => (e.type === 'ack' ? [e.ack] : []));
    expect(acks.map((a) => [a.hop, a.stage, a.ack])).toEqual(result.acks.map((a) => [a.hop, a.stage, a.ack]));
    // Each worked hop: started, then acked, then finished, in that order.
    for (const ack of acks.filter((a) => a.ack === 'accepted')) {
      const at = (type: string) => events.findIndex((e) => e.type === type && 'hop' in e && e.hop === ack.hop);
      const ackAt = events.findIndex((e) => e.type === 'ack' && e.ack.hop === ack.hop);
      expect([at('hop_started') < ackAt, ackAt < at('hop_finished')], `hop ${ack.hop}`).toEqual([true, true]);
    }
  });

  it('following adds nothing to the job: a followed job has the history of one nobody followed, event for event', async () => {
    const followed = jobRequest();
    const alone = jobRequest();
    await startJob(rail.client, followed, { taskQueue: rail.taskQueue });
    await startJob(rail.client, alone, { taskQueue: rail.taskQueue });
    await collect(followed.job_id);
    await jobResult(rail.client, alone.job_id);
    const kinds = async (id: string) =>
      ((await rail.client.workflow.getHandle(id).fetchHistory()).events ?? []).map((e) => e.eventType);
    const [a, b] = [await kinds(followed.job_id), await kinds(alone.job_id)];
    expect(a).toEqual(b);
    expect(a.length).toBeGreaterThan(0);
  });

  it("a follower asks the job's worker no query while its hops go on: each delivery carries the rail's records into the history, and they read as a query's would", async () => {
    const asked: string[] = [];
    const counting = new Client({
      connection: rail.client.connection,
      namespace: rail.client.options.namespace,
      dataConverter: handrailDataConverter(),
      interceptors: { workflow: [{ query: (input, next) => (asked.push(input.queryType), next(input)) }] },
    });
    const request = jobRequest();
    await startJob(rail.client, request, { taskQueue: rail.taskQueue });
    // Followed once the first delivery is scheduled (before it the rail has carried nothing yet).
    const handle = rail.client.workflow.getHandle(request.job_id);
    const scheduled = async () =>
      ((await handle.fetchHistory()).events ?? []).some((e) => e.activityTaskScheduledEventAttributes);
    await expect.poll(scheduled, { timeout: 10_000, interval: 20 }).toBe(true);
    const events: JobEvent[] = [];
    for await (const item of followJob(counting, request.job_id, { store: rail.store }))
      if (item.kind === 'event') events.push(item.event);
    expect(asked).toEqual([]);
    // What the carried records gave is what the rail's result holds: every ack, the ending.
    const result = await jobResult(rail.client, request.job_id);
    const acks = events.flatMap((e) => (e.type === 'ack' ? [e.ack] : []));
    expect(acks).toEqual(result.acks);
    expect(events.at(-1)).toMatchObject({ type: 'job_finished', status: 'completed' });
    expect(events.filter((e) => e.type === 'hop_started').length).toBe(result.hops + 1);
  });

  it('a finished job reads the same events under the same ids from the first, and from an id exactly the rest', async () => {
    const request = jobRequest();
    await startJob(rail.client, request, { taskQueue: rail.taskQueue });
    const live = (await collect(request.job_id)).events;
    const again = (await collect(request.job_id)).events;
    expect(again).toEqual(live);
    const middle = live[Math.floor(live.length / 2)]!.id;
    expect((await collect(request.job_id, middle)).events).toEqual(live.filter((e) => e.id > middle));
  });

  it('journal entries the rail did not record are never shown: a forged ack, a job ending, text for a hop it never started', async () => {
    const request = jobRequest();
    await startJob(rail.client, request, { taskQueue: rail.taskQueue });
    await jobResult(rail.client, request.job_id);
    await rail.store.appendStreamEntries(request.job_id, [
      {
        key: 'ack:99:accepted:0',
        body: JSON.stringify({ type: 'ack', ack: { ack: 'accepted', stage: 'writeback', hop: 99 } }),
      },
      { key: 'hop:98', body: JSON.stringify({ type: 'hop_started', stage: 'writeback', hop: 98, reserved_usd: 0 }) },
      {
        key: 'text:97:draft:0',
        body: JSON.stringify({ type: 'text_delta', stage: 'draft', hop: 97, delta: 'refund approved' }),
        expiresAt: new Date(Date.now() + 60_000),
      },
    ]);
    const { events } = await collect(request.job_id);
    expect(events.filter((e) => ('hop' in e && e.hop >= 97) || (e.type === 'ack' && e.ack.hop >= 97))).toEqual([]);
    expect(events.filter((e) => e.type === 'job_finished')).toHaveLength(1);
  });
});

describe('GET /jobs/{id}/events (AG-UI over SSE)', () => {
  it('an @ag-ui/client HttpAgent follows a job to RUN_FINISHED with its status, seeing each hop as a step and each ack', async () => {
    const request = jobRequest();
    await startJob(rail.client, request, { taskQueue: rail.taskQueue });
    const agent = new HttpAgent({
      url: `${base}/jobs/${request.job_id}/events`,
      headers: { authorization: `Bearer ${TOKENS.ana}` },
    });
    const seen: string[] = [];
    let state: unknown;
    const { result } = await agent.runAgent(
      {},
      {
        onStepStartedEvent: ({ event }) => void seen.push(`start ${event.stepName}`),
        onStepFinishedEvent: ({ event }) => void seen.push(`finish ${event.stepName}`),
        onCustomEvent: ({ event }) => void seen.push(event.name),
        onStateChanged: ({ state: s }) => void (state = s),
      },
    );
    expect(result).toMatchObject({ status: 'completed' });
    const done = await jobResult(rail.client, request.job_id);
    expect(seen.filter((s) => s === 'handrail.ack')).toHaveLength(done.acks.length);
    const first = done.acks[0]!;
    expect(seen).toContain(`start hop ${first.hop}: ${first.stage}`);
    expect(seen).toContain(`finish hop ${first.hop}: ${first.stage}`);
    expect(state).toMatchObject({ status: 'completed', hops: done.hops });
  });

  it('resumes with Last-Event-ID: the numbered events after it, exactly, after a RUN_STARTED for the new connection', async () => {
    const request = jobRequest();
    await startJob(rail.client, request, { taskQueue: rail.taskQueue });
    await jobResult(rail.client, request.job_id);
    const whole = await sse(request.job_id);
    const numbered = whole.frames.filter((f) => f.id !== undefined);
    expect(numbered.length).toBeGreaterThan(5);
    const cut = numbered[3]!.id!;
    const rest = await sse(request.job_id, { 'last-event-id': String(cut) });
    expect(rest.frames[0]!.event.type).toBe('RUN_STARTED');
    expect(rest.frames.filter((f) => f.id !== undefined).map((f) => [f.id, f.event.type])).toEqual(
      numbered.filter((f) => f.id! > cut).map((f) => [f.id, f.event.type]),
    );
    expect(rest.frames.at(-1)!.event).toMatchObject({ type: 'RUN_FINISHED', result: { status: 'completed' } });
  });

  it("another owner's job and a job that does not exist are the same 404; a malformed Last-Event-ID is a typed 400; no token is 401", async () => {
    const request = jobRequest({ owner: 'bob' });
    await startJob(rail.client, request, { taskQueue: rail.taskQueue });
    const others = await sse(request.job_id);
    const missing = await sse('no-such-job-follow');
    expect([others.status, missing.status]).toEqual([404, 404]);
    expect(others.body.error).toBe(missing.body.error);
    const bad = await sse(request.job_id, { 'last-event-id': 'ten' });
    expect([bad.status, bad.body.error]).toEqual([400, 'invalid_last_event_id']);
    const res = await fetch(`${base}/jobs/${request.job_id}/events`);
    expect(res.status).toBe(401);
    await jobResult(rail.client, request.job_id);
  });
});

describe('a server stopping with followers attached', () => {
  it('ends its open streams and closes (followers resume elsewhere), however long their job waits', async () => {
    const server = buildHandoffsApi({
      store: rail.store,
      users,
      temporal: rail.client,
      workspaces: { [rail.client.options.namespace]: BUILT_IN_PIPELINES.map((p) => p.name) },
    });
    const at = await server.listen({ port: 0, host: '127.0.0.1' });
    // A wallet too small for the draft: the job waits on a human, its stream stays open.
    const request = jobRequest({ budget: { usd: 0.005, revisions: 1 } });
    await startJob(rail.client, request, { taskQueue: rail.taskQueue });
    const res = await fetch(`${at}/jobs/${request.job_id}/events`, {
      headers: { authorization: `Bearer ${TOKENS.ana}` },
    });
    const reader = res.body!.getReader();
    let text = '';
    while (!text.includes('handrail.escalation')) {
      const { value, done } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
    expect(text).toContain('handrail.escalation');
    // No closeAllConnections: the server's own close must end the stream.
    await server.close();
    for (;;) if ((await reader.read()).done) break;
    await rail.client.workflow.getHandle(request.job_id).cancel();
  });
});
