/**
 * Per-call approval in a model stage's tool loop, against a real local OpenAI-compatible server:
 * a call whose grant asks for approval stops the loop at that call (nothing of it runs, the steps
 * before it are checkpointed, the attempt fails ToolApprovalRequired with the call and its
 * digest); the hop resumed with a human's word on that digest replays the steps (no model call
 * repeated), runs exactly that call once (approve) or hands the model the denial as the tool's
 * error (deny); a word on another call does not apply.
 */
import { ApplicationFailure } from '@temporalio/common';
import { tool } from 'ai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  TOOL_APPROVAL_DECIDED,
  definePipeline,
  shownArgs,
  toolCallDigest,
  type HandoffV1,
  type ToolApprovalDecided,
  type ToolCallAwaiting,
  type ToolGrant,
} from '../../../contracts';
import { runModelStage } from '../../../activities/model-stage';
import type { ChatModel } from '../../../src/worker/model';
import { openStore, type Store } from '../../../src/worker/store';
import { scriptedChatModel, turnFor, wikiWriter, wikiWriterScript } from './helpers';
import { startScriptedModel, type ScriptedModel } from '../../helpers/scripted-model';

const Posted = z.object({ posted: z.boolean() });
const pkg = { job_id: 'job-7', constraints: [] } as unknown as HandoffV1;
let server: ScriptedModel;
let model: ChatModel;
let store: Store;

beforeAll(async () => {
  server = await startScriptedModel(wikiWriterScript);
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

/** The wiki writer (search, then post_note, then its answer), `post_note` asked per `approval`. */
function publish(
  key: string,
  approval: ToolGrant['approval'],
  ran: unknown[],
  words: ToolApprovalDecided[] = [],
  /** post_note takes `{ text: string }` only (the default takes any object). */
  strict = false,
) {
  const card = wikiWriter([
    { name: 'search', access: 'read', system: 'wiki' },
    { name: 'post_note', access: 'write', system: 'wiki', ...(approval ? { approval } : {}) },
  ]);
  const turn = {
    ...turnFor(key),
    hooks: words.map((w) => ({ event: TOOL_APPROVAL_DECIDED, text: JSON.stringify(w) })),
  };
  const record = (name: string, schema: z.ZodType = z.object({}).passthrough()) =>
    tool({
      inputSchema: schema,
      execute: async (input) => (ran.push({ [name]: input }), { ok: true }),
    });
  return runModelStage(store, model, pkg, turn, {
    card,
    question: 'post the brief',
    output: { type: 'receipt.v1', schema: Posted },
    tools: {
      search: record('search'),
      post_note: record('post_note', strict ? z.object({ text: z.string() }) : undefined),
    },
    maxSteps: 4,
  });
}

async function stopped(run: Promise<unknown>): Promise<ToolCallAwaiting> {
  const failure = await run.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(failure).toBeInstanceOf(ApplicationFailure);
  expect((failure as ApplicationFailure).type).toBe('ToolApprovalRequired');
  expect((failure as ApplicationFailure).nonRetryable).toBe(true);
  return ((failure as ApplicationFailure).details![0] as { tool_call: ToolCallAwaiting }).tool_call;
}

describe('a tool call that needs a human', () => {
  it('stops the loop at the call: the search ran, the post did not, and the call is named with its digest', async () => {
    const ran: unknown[] = [];
    const call = await stopped(publish('job-7:publish:3', 'always', ran));
    expect(ran).toEqual([{ search: { topic: 'refunds' } }]);
    expect(server.requests).toHaveLength(2);
    expect(call).toEqual({
      name: 'post_note',
      call_id: 'call_2',
      args: { text: 'Refunds: 30 days' },
      resume_key: 'job-7:publish:3',
      digest: toolCallDigest({
        resume_key: 'job-7:publish:3',
        call_id: 'call_2',
        name: 'post_note',
        args: { text: 'Refunds: 30 days' },
      }),
    });
  });

  it('approved: the resumed hop replays the two steps, runs that call once and asks the model only its next step', async () => {
    const ran: unknown[] = [];
    const call = await stopped(publish('job-7:publish:5', 'always', ran));
    server.requests.length = 0;
    const word = { digest: call.digest, verdict: 'approve', actor: 'ops.lead', resume_key: call.resume_key } as const;
    const output = await publish('job-7:publish:7', 'always', ran, [word]);
    expect(output.body).toEqual({ posted: true });
    expect(ran).toEqual([{ search: { topic: 'refunds' } }, { post_note: { text: 'Refunds: 30 days' } }]);
    expect(server.requests).toHaveLength(1);
    // A retried attempt of the resumed hop replays the call's recorded result: it does not run again.
    await publish('job-7:publish:7', 'always', ran, [word]);
    expect(ran).toHaveLength(2);
  });

  it("denied: the call never runs and the model reads the denial as the tool's error", async () => {
    const ran: unknown[] = [];
    const call = await stopped(publish('job-7:publish:9', 'always', ran));
    server.requests.length = 0;
    const word = {
      digest: call.digest,
      verdict: 'deny',
      actor: 'ops.lead',
      note: 'not this week',
      resume_key: call.resume_key,
    } as const;
    await publish('job-7:publish:11', 'always', ran, [word]);
    expect(ran).toEqual([{ search: { topic: 'refunds' } }]);
    expect(server.requests).toHaveLength(1);
    expect(JSON.stringify(server.requests[0]!.messages.at(-1))).toContain(
      'post_note was denied by ops.lead: not this week',
    );
  });

  it("approved with a human's arguments: the call runs with them, once; arguments that do not fit the tool are refused and the model reads why", async () => {
    const ran: unknown[] = [];
    const call = await stopped(publish('job-7:publish:23', 'always', ran));
    server.requests.length = 0;
    const word = {
      digest: call.digest,
      verdict: 'approve',
      actor: 'ops.lead',
      resume_key: call.resume_key,
      args: { text: 'Refunds: 14 days' },
    } as const;
    await publish('job-7:publish:25', 'always', ran, [word]);
    expect(ran).toEqual([{ search: { topic: 'refunds' } }, { post_note: { text: 'Refunds: 14 days' } }]);

    const strict: unknown[] = [];
    const stopAt = await stopped(publish('job-7:publish:27', 'always', strict, [], true));
    server.requests.length = 0;
    const misfit = { ...word, digest: stopAt.digest, resume_key: stopAt.resume_key, args: { text: 42 } };
    await publish('job-7:publish:29', 'always', strict, [misfit as unknown as ToolApprovalDecided], true);
    expect(strict).toEqual([{ search: { topic: 'refunds' } }]);
    expect(JSON.stringify(server.requests[0]!.messages.at(-1))).toContain(
      'the arguments a human gave post_note do not fit it',
    );
  });

  it('a word on another call does not apply: the same tool with other arguments waits again', async () => {
    const ran: unknown[] = [];
    const call = await stopped(publish('job-7:publish:13', 'always', ran));
    const other = toolCallDigest({ ...call, args: { text: 'Refunds: 90 days' } });
    const word = { digest: other, verdict: 'approve', actor: 'ops.lead', resume_key: call.resume_key } as const;
    expect(await stopped(publish('job-7:publish:15', 'always', ran, [word]))).toEqual(call);
    expect(ran).toEqual([{ search: { topic: 'refunds' } }]);
  });

  it("a predicate over the arguments decides, and 'never' (the default) runs every call as before", async () => {
    const ran: unknown[] = [];
    await publish('job-7:publish:17', (args) => String((args as { text: string }).text).includes('90'), ran);
    expect(await publish('job-7:publish:19', 'never', ran)).toMatchObject({ body: { posted: true } });
    expect(ran.filter((r) => 'post_note' in (r as object))).toHaveLength(2);
    await stopped(publish('job-7:publish:21', (args) => String((args as { text: string }).text).includes('30'), ran));
  });
});

it('definePipeline refuses an approval that is neither always, never nor a predicate', () => {
  const card = wikiWriter([
    { name: 'post_note', access: 'write', system: 'wiki', approval: 'sometimes' as unknown as 'always' },
  ]);
  expect(() => definePipeline({ name: 'approvals', stages: [card], routes: [] } as never)).toThrow(
    /asks approval for tool post_note as "sometimes"; give 'always', 'never' or a predicate/,
  );
});

it("the arguments a human is shown are masked where the job masks personal data; the digest stays the call's", () => {
  const args = { to: 'ana@example.com', amounts: [{ card: '4111 1111 1111 1111' }], usd: 120 };
  const masked = shownArgs(['redact personal data'], args) as typeof args;
  expect(JSON.stringify(masked)).not.toMatch(/ana@example\.com|4111/);
  expect(masked.usd).toBe(120);
  expect(shownArgs(['no refund promises'], args)).toBe(args);
});
