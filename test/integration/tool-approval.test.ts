/**
 * Ask before acting, on a real dev server: the research-brief researcher's worker grants its
 * library `search` with `approval: 'always'`, so each search call stops the stage's loop and the
 * rail escalates with the call shown (status, the stream's escalation, `HandrailAcks`). A decision
 * is taken only with the digest of that call; approved, the resumed hop runs that call and the
 * model is never asked a step twice; denied, the model reads the denial and the job goes on.
 */
import { TaskState, type StreamResponse } from '@a2a-js/sdk';
import { ApplicationFailure } from '@temporalio/common';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TOOL_APPROVAL_DECIDED, toolCallDigest, type StageWork } from '../../contracts';
import { a2aServerFor, userMessage } from '../helpers/a2a-messages';
import { builtInActivities } from '../../activities/built-in';
import { researchBriefActivities } from '../../activities/research-brief';
import { SYSTEM } from '../../activities/research-brief/stages';
import { cancelJob, decide, startJob } from '../../src/operator/client';
import { startResearchModel, type ResearchModel } from '../../src/devtools/research-model';
import { statusQuery, type JobStatusView } from '../../workflows/definitions';
import { HandrailAcks } from '../../workflows/search-attributes';
import { jobRequest, startRail, uniqueId, waitForStatus, type Rail } from '../helpers/rail';

let model: ResearchModel;
let rail: Rail;
beforeAll(async () => {
  model = await startResearchModel();
  Object.assign(process.env, {
    HANDRAIL_MODEL_BASE_URL: model.baseUrl,
    HANDRAIL_MODEL: 'research-offline',
    HANDRAIL_MODEL_USD_PER_MTOK_IN: '1',
    HANDRAIL_MODEL_USD_PER_MTOK_OUT: '4',
  });
  rail = await startRail({
    stageActivities: (deps) => ({
      ...builtInActivities(deps),
      ...researchBriefActivities(deps, undefined, { approvals: { search: 'always' } }),
    }),
  });
});
afterAll(async () => {
  await rail?.stop();
  await model?.close();
});

/** How many requests the researcher's model has been sent so far (the file's jobs run one at a time). */
const researcherAsked = () =>
  model.requests.filter((r) => r.messages.some((m) => m.role === 'system' && m.content === SYSTEM.researcher)).length;

async function briefJob() {
  const request = { ...jobRequest({ job_id: uniqueId('approve') }), pipeline: 'research-brief' };
  const { handle } = await startJob(rail.client, request, rail);
  return { request, handle };
}

/** Calls decided so far: a decided call may still show for a moment (its word is taken, the rail
 * has not moved on yet), and a word on it again is refused as already being applied. */
const decided = new Set<string>();

async function decideCall(jobId: string, decision: Parameters<typeof decide>[2]): Promise<void> {
  await decide(rail.client, jobId, decision);
  const digest = (decision as { tool_call?: { digest: string } }).tool_call?.digest;
  if (digest) decided.add(digest);
}

/** The job's status once it waits on a call not decided yet (or any other escalation), or once it ended. */
async function nextWait(handle: Awaited<ReturnType<typeof briefJob>>['handle']): Promise<JobStatusView | undefined> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const described = await handle.describe();
    if (described.status.name !== 'RUNNING') return undefined;
    const view = await handle.query(statusQuery);
    const call = view.escalation?.tool_call;
    if (view.status === 'escalated' && !(call && decided.has(call.digest))) return view;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('the job neither waited on a human nor ended');
}

describe('a tool call that waits for a human', () => {
  it('escalates with the call shown; approved by its digest only, each search runs and the model is asked each step once', async () => {
    const askedBefore = researcherAsked();
    const { request, handle } = await briefJob();
    let approvals = 0;
    let first = true;
    for (let view = await nextWait(handle); view; view = await nextWait(handle)) {
      const call = view.escalation?.tool_call;
      expect(call, JSON.stringify(view.escalation)).toMatchObject({
        name: 'search',
        args: { query: expect.any(String) },
      });
      expect(view.escalation!.options).toEqual(['approve', 'reject']);
      if (first) {
        first = false;
        const attrs = (await handle.describe()).typedSearchAttributes.get(HandrailAcks);
        expect(attrs).toContain('tool_approval');
        // Approve names the call it approves: without a word, or with another call's digest, it is refused.
        await expect(decide(rail.client, request.job_id, { action: 'approve', actor: 'ops.lead' })).rejects.toThrow(
          /waits on a tool call: approve it with tool_call/,
        );
        const other = `sha256:${'0'.repeat(64)}`;
        await expect(
          decide(rail.client, request.job_id, {
            action: 'approve',
            actor: 'ops.lead',
            tool_call: { digest: other, verdict: 'approve' },
          }),
        ).rejects.toThrow(/is not the call this escalation waits on/);
      }
      await decideCall(request.job_id, {
        action: 'approve',
        actor: 'ops.lead',
        tool_call: { digest: call!.digest, verdict: 'approve' },
      });
      approvals++;
    }
    const result = await handle.result();
    expect(result.status).toBe('completed');
    expect(approvals).toBeGreaterThan(0);
    // One human hop per call, each decided once: escalated, then the decision.
    const human = result.acks.filter((a) => a.stage === 'human');
    expect(human.filter((a) => a.actor === 'ops.lead')).toHaveLength(approvals);
    // The researcher's model was asked its two steps once each, however many times the hop resumed.
    expect(researcherAsked() - askedBefore).toBe(2);
    const attrs = (await handle.describe()).typedSearchAttributes.get(HandrailAcks);
    expect(attrs).not.toContain('tool_approval');
  });

  it('denied: that call never runs, the model reads the denial as its error in its next step, and the job goes on', async () => {
    const { request, handle } = await briefJob();
    const denied = (await nextWait(handle))!.escalation!.tool_call!;
    await decideCall(request.job_id, {
      action: 'approve',
      actor: 'ops.lead',
      note: 'not that library',
      tool_call: { digest: denied.digest, verdict: 'deny' },
    });
    // The step's other searches wait in turn, each its own call and digest.
    for (let view = await nextWait(handle); view; view = await nextWait(handle)) {
      const call = view.escalation!.tool_call!;
      expect(call.digest).not.toBe(denied.digest);
      await decideCall(request.job_id, {
        action: 'approve',
        actor: 'ops.lead',
        tool_call: { digest: call.digest, verdict: 'approve' },
      });
    }
    expect((await handle.result()).status).toBe('completed');
    const told = model.requests.filter((r) =>
      JSON.stringify(r.messages).includes('search was denied by ops.lead: not that library'),
    );
    expect(told).toHaveLength(1);
  });

  it("approved with a human's arguments where the grant allows edits (research-brief's search): the decision records it, the job completes", async () => {
    const { request, handle } = await briefJob();
    const view = (await nextWait(handle))!;
    expect(view.escalation!.tool_call).toMatchObject({ name: 'search', editable: true });
    await decideCall(request.job_id, {
      action: 'approve',
      actor: 'ops.lead',
      tool_call: { digest: view.escalation!.tool_call!.digest, verdict: 'approve', args: { query: 'refund policy' } },
    });
    for (let next = await nextWait(handle); next; next = await nextWait(handle))
      await decideCall(request.job_id, {
        action: 'approve',
        actor: 'ops.lead',
        tool_call: { digest: next.escalation!.tool_call!.digest, verdict: 'approve' },
      });
    const result = await handle.result();
    expect(result.status).toBe('completed');
    const edited = result.acks.filter((a) => a.tool_call?.edited);
    expect(edited).toHaveLength(1);
    expect(edited[0]!.reason).toContain('the tool call runs with edited arguments');
  });

  it('a job cancelled while a call waits ends cancelled; a word on the call after that is refused and nothing runs', async () => {
    const { request, handle } = await briefJob();
    const call = (await nextWait(handle))!.escalation!.tool_call!;
    const asked = researcherAsked();
    await cancelJob(rail.client, request.job_id);
    expect((await handle.result()).status).toBe('cancelled');
    await expect(
      decide(rail.client, request.job_id, {
        action: 'approve',
        actor: 'ops.lead',
        tool_call: { digest: call.digest, verdict: 'approve' },
      }),
    ).rejects.toThrow(/cancelled|ended/);
    expect(researcherAsked()).toBe(asked);
  });

  it("two approvers racing on one call: one word is taken, the other refused; a word on another job's call is refused", async () => {
    const { request, handle } = await briefJob();
    const other = await briefJob();
    const call = (await nextWait(handle))!.escalation!.tool_call!;
    const otherCall = (await nextWait(other.handle))!.escalation!.tool_call!;
    // The same tool and arguments in another job: another digest (the resume key is that job's).
    expect(otherCall.args).toEqual(call.args);
    expect(otherCall.digest).not.toBe(call.digest);
    await expect(
      decide(rail.client, request.job_id, {
        action: 'approve',
        actor: 'mallory',
        tool_call: { digest: otherCall.digest, verdict: 'approve' },
      }),
    ).rejects.toThrow(/is not the call this escalation waits on/);
    const word = (actor: string) =>
      decide(rail.client, request.job_id, {
        action: 'approve',
        actor,
        tool_call: { digest: call.digest, verdict: actor === 'ana' ? 'approve' : 'deny' },
      });
    const raced = await Promise.allSettled([word('ana'), word('bob')]);
    expect(raced.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
    const refused = raced.find((r) => r.status === 'rejected') as PromiseRejectedResult;
    expect(String(refused.reason)).toMatch(/already being applied|not waiting for a human decision/);
    const acks = (await handle.query('acks')) as { actor?: string }[];
    expect(acks.filter((a) => a.actor === 'ana' || a.actor === 'bob')).toHaveLength(1);
    await cancelJob(rail.client, request.job_id);
    await cancelJob(rail.client, other.request.job_id);
  });

  it('a word on a tool call is refused on an escalation that waits on none', async () => {
    const request = jobRequest({ budget: { usd: 0.005, revisions: 1 } });
    const { handle } = await startJob(rail.client, request, rail);
    await waitForStatus(handle, 'escalated');
    await expect(
      decide(rail.client, request.job_id, {
        action: 'approve',
        actor: 'ops.lead',
        tool_call: { digest: `sha256:${'a'.repeat(64)}`, verdict: 'approve' },
      }),
    ).rejects.toThrow(/no tool call waits on this escalation/);
    await cancelJob(rail.client, request.job_id);
  });
});

it('over A2A: each call waits as input-required with the call in a data part, and a reply naming its digest decides it', async () => {
  const a2a = await a2aServerFor(rail, 'tok-a2a-approve');
  try {
    const client = a2a.client;
    const send = async (data: unknown, taskId = '') => {
      const events: StreamResponse[] = [];
      for await (const e of client.sendMessageStream({
        tenant: '',
        message: userMessage(data, { taskId }),
        configuration: undefined,
        metadata: undefined,
      }))
        events.push(e);
      const last = events.at(-1)!;
      if (last.payload?.$case !== 'statusUpdate') throw new Error('the stream did not end on a status');
      const status = last.payload.value.status!;
      const parts = status.message?.parts ?? [];
      const shown = parts.flatMap((p) => (p.content?.$case === 'data' ? [p.content.value] : []))[0] as
        { escalation?: { tool_call?: { name: string; digest: string } } } | undefined;
      return { taskId: last.payload.value.taskId, state: status.state, call: shown?.escalation?.tool_call };
    };
    const { job_id: _id, ...request } = jobRequest();
    let answer = await send({ ...request, pipeline: 'research-brief' });
    let words = 0;
    while (answer.state === TaskState.TASK_STATE_INPUT_REQUIRED) {
      expect(answer.call).toMatchObject({ name: 'search', digest: expect.stringMatching(/^sha256:/) });
      answer = await send(
        { action: 'approve', tool_call: { digest: answer.call!.digest, verdict: 'approve' } },
        answer.taskId,
      );
      words++;
    }
    expect(answer.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(words).toBeGreaterThan(0);
  } finally {
    await a2a.close();
  }
});

it("a stage worker that lies about its call: the rail names the call's resume key and digest itself, and the word handed back is the rail's", async () => {
  const forged = `sha256:${'f'.repeat(64)}`;
  const delivered: StageWork[] = [];
  const lying = await startRail({
    store: rail.store,
    activities: (real) => ({
      draft: async (work: StageWork) => {
        delivered.push(work);
        if (work.hook_results?.length) return real.draft(work);
        throw ApplicationFailure.nonRetryable('draft: asks', 'ToolApprovalRequired', {
          tool_call: {
            name: 'kb.search',
            call_id: 'call_9',
            args: { query: 'refunds' },
            resume_key: 'someone-else:draft:3',
            digest: forged,
          },
        });
      },
    }),
  });
  try {
    const request = jobRequest();
    const { handle } = await startJob(lying.client, request, lying);
    const view = await waitForStatus(handle, 'escalated');
    const first = delivered[0]!;
    const digest = toolCallDigest({
      name: 'kb.search',
      call_id: 'call_9',
      args: { query: 'refunds' },
      resume_key: first.delivery_key,
    });
    expect(view.escalation!.tool_call).toEqual({
      name: 'kb.search',
      call_id: 'call_9',
      args: { query: 'refunds' },
      digest,
    });
    await expect(
      decide(lying.client, request.job_id, {
        action: 'approve',
        actor: 'ops.lead',
        tool_call: { digest: forged, verdict: 'approve' },
      }),
    ).rejects.toThrow(/is not the call this escalation waits on/);
    await decide(lying.client, request.job_id, {
      action: 'approve',
      actor: 'ops.lead',
      tool_call: { digest, verdict: 'approve' },
    });
    // The draft is delivered again with the rail's word (this file's model serves no ticket judge:
    // the job is cancelled once the draft has its word).
    await expect.poll(() => delivered.length, { timeout: 20_000 }).toBe(2);
    await cancelJob(lying.client, request.job_id);
    const word = JSON.parse(delivered.at(-1)!.hook_results!.find((h) => h.event === TOOL_APPROVAL_DECIDED)!.text);
    expect(word).toEqual({ digest, verdict: 'approve', actor: 'ops.lead', resume_key: first.delivery_key });
  } finally {
    await lying.stop();
  }
});
