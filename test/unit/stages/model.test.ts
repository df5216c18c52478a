import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApplicationFailure } from '@temporalio/common';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { SummaryMd, VerdictV1 } from '../../../contracts';
import { createActivities } from '../../../activities/built-in';
import {
  ModelError,
  createChatModel,
  modelConfigFromEnv,
  withPrices,
  type ModelConfig,
} from '../../../src/worker/model';
import type { Store } from '../../../src/worker/store';
import { completionAsStream } from '../../../src/devtools/scripted-model';
import { Relay, corpusStore, firstPackage, refundTicket, ticketRef } from './helpers';

interface SeenRequest {
  headers: http.IncomingHttpHeaders;
  body: {
    model: string;
    messages: { role: string; content: string }[];
    temperature: number;
    response_format?: unknown;
    stream?: boolean;
  };
}

/** A local server speaking the OpenAI chat-completions API; each test sets how it answers. */
let answer: (request: SeenRequest) => { status?: number; json?: unknown; raw?: string };
const seen: SeenRequest[] = [];
let server: http.Server;
let config: ModelConfig;

const reply = (content: string, usage: object | null = { prompt_tokens: 1_000, completion_tokens: 200 }) => ({
  json: {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
    ...(usage ? { usage } : {}),
  },
});

beforeAll(async () => {
  server = http.createServer((req, res) => {
    let data = '';
    req.on('data', (chunk: Buffer) => (data += chunk.toString('utf8')));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
        res.writeHead(404).end('{"error":{"message":"not found"}}');
        return;
      }
      const request = { headers: req.headers, body: JSON.parse(data) as SeenRequest['body'] };
      seen.push(request);
      const out = answer(request);
      // A stage's model streams while its hop is followed (src/worker/model/streaming.ts).
      if (request.body.stream && out.json && (out.status ?? 200) === 200) {
        res.writeHead(200, { 'content-type': 'text/event-stream' }).end(completionAsStream(out.json as never));
        return;
      }
      res.writeHead(out.status ?? 200, { 'content-type': 'application/json' }).end(out.raw ?? JSON.stringify(out.json));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  config = {
    baseUrl: `http://127.0.0.1:${port}/v1/`,
    apiKey: 'sk-test',
    model: 'tiny-1',
    usdPerMTokIn: 2,
    usdPerMTokOut: 10,
    timeoutMs: 5_000,
  };
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});
beforeEach(() => {
  seen.length = 0;
});

/** The AI SDK refuses an empty prompt before sending it, so every call here says something. */
const HI = [{ role: 'user' as const, content: 'hi' }];

describe('chat model adapter', () => {
  it('speaks chat completions and prices token usage', async () => {
    answer = () => reply('hello');
    const result = await createChatModel(config).complete([{ role: 'user', content: 'hi' }], {
      maxTokens: 50,
      json: true,
    });
    // 1,000 prompt tokens at $2/M + 200 completion tokens at $10/M.
    expect(result).toEqual({ text: 'hello', usage: { prompt_tokens: 1_000, completion_tokens: 200 }, cost_usd: 0.004 });
    expect(seen[0]?.headers.authorization).toBe('Bearer sk-test');
    expect(seen[0]?.body).toMatchObject({
      model: 'tiny-1',
      temperature: 0,
      max_tokens: 50,
      response_format: { type: 'json_object' },
    });
  });

  it('prices cached prompt tokens at their own price when one is set', async () => {
    answer = () =>
      reply('hello', { prompt_tokens: 1_000, completion_tokens: 200, prompt_tokens_details: { cached_tokens: 600 } });
    const result = await createChatModel({ ...config, usdPerMTokCached: 0.5 }).complete(HI);
    // 400 uncached prompt tokens at $2/M, 600 cached at $0.5/M, 200 completion tokens at $10/M.
    expect(result.usage).toEqual({ prompt_tokens: 1_000, completion_tokens: 200, cached_tokens: 600 });
    expect(result.cost_usd).toBeCloseTo(0.0031, 12);
    // Without a cached price, a cached token costs what any prompt token does.
    expect((await createChatModel(config).complete(HI)).cost_usd).toBeCloseTo(0.004, 12);
  });

  it('prices a reply at the price of the model it names, when the table prices it, else at its own', async () => {
    const named = (model: string) => ({ json: { ...reply('hello').json, model } });
    const priced = createChatModel({ ...config, prices: { 'big-2': { usdPerMTokIn: 20, usdPerMTokOut: 100 } } });
    // A router answered with big-2's dated snapshot: 1,000 × $20/M + 200 × $100/M.
    answer = () => named('big-2-2025-01-01');
    expect((await priced.complete(HI)).cost_usd).toBeCloseTo(0.04, 12);
    // A reply naming a model the table does not price is charged at the configured model's price.
    answer = () => named('tiny-1-latest-build');
    expect((await priced.complete(HI)).cost_usd).toBeCloseTo(0.004, 12);
    expect(priced.prices).toEqual({
      'big-2': { usdPerMTokIn: 20, usdPerMTokOut: 100 },
      'tiny-1': { usdPerMTokIn: 2, usdPerMTokOut: 10 },
    });
  });

  it.each([
    [401, false],
    [404, false],
    [429, true],
    [503, true],
  ])('maps HTTP %i to retryable=%s', async (status, retryable) => {
    answer = () => ({ status, json: { error: { message: 'nope' } } });
    const error = await createChatModel(config)
      .complete([{ role: 'user', content: 'hi' }])
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ModelError);
    expect(error).toMatchObject({ retryable, status });
  });

  it('refuses a reply without token usage (it could not be charged) or without content', async () => {
    // toMatchObject does not compare an Error's message, so the message is matched by toThrow.
    const refusal = async (pattern: RegExp) => {
      const error = createChatModel(config).complete(HI);
      await expect(error).rejects.toMatchObject({ retryable: false });
      await expect(error).rejects.toThrow(pattern);
    };
    answer = () => reply('free text', null);
    await refusal(/no token usage/);
    answer = () => ({ json: { choices: [] } });
    await refusal(/model reply unreadable: .*any choices/);
    answer = () => ({ raw: '<html>gateway</html>' });
    await refusal(/model endpoint answered 200: <html>gateway/);
  });

  it('treats an unreachable endpoint as retryable', async () => {
    const closed = createChatModel({ ...config, baseUrl: 'http://127.0.0.1:1/v1' });
    await expect(closed.complete(HI)).rejects.toMatchObject({ name: 'ModelError', retryable: true });
  });

  it('an aborted request (the stage was cancelled) throws the abort reason, not a retryable ModelError', async () => {
    answer = () => reply('too late');
    const cancelled = new Error('activity cancelled');
    const controller = new AbortController();
    controller.abort(cancelled);
    await expect(createChatModel(config).complete(HI, { signal: controller.signal })).rejects.toBe(cancelled);
    expect(seen).toHaveLength(0);
  });

  it('reads its configuration from the environment, and requires prices', () => {
    expect(modelConfigFromEnv({})).toBeUndefined();
    expect(() => modelConfigFromEnv({ HANDRAIL_MODEL: 'x' })).toThrow(/both/);
    expect(() => modelConfigFromEnv({ HANDRAIL_MODEL: 'x', HANDRAIL_MODEL_BASE_URL: 'http://h/v1' })).toThrow(
      /HANDRAIL_MODEL_USD_PER_MTOK_IN/,
    );
    expect(
      modelConfigFromEnv({
        HANDRAIL_MODEL: 'x',
        HANDRAIL_MODEL_BASE_URL: 'http://h/v1',
        HANDRAIL_MODEL_API_KEY: 'k',
        HANDRAIL_MODEL_USD_PER_MTOK_IN: '0.5',
        HANDRAIL_MODEL_USD_PER_MTOK_OUT: '1.5',
      }),
    ).toEqual({
      baseUrl: 'http://h/v1',
      apiKey: 'k',
      model: 'x',
      usdPerMTokIn: 0.5,
      usdPerMTokOut: 1.5,
      timeoutMs: 60_000,
    });
    expect(
      modelConfigFromEnv({
        HANDRAIL_MODEL: 'x',
        HANDRAIL_MODEL_BASE_URL: 'http://h/v1',
        HANDRAIL_MODEL_USD_PER_MTOK_IN: '2',
        HANDRAIL_MODEL_USD_PER_MTOK_OUT: '8',
        HANDRAIL_MODEL_USD_PER_MTOK_CACHED: '0.5',
      }),
    ).toMatchObject({ usdPerMTokIn: 2, usdPerMTokCached: 0.5 });
  });

  it('takes a price table from HANDRAIL_MODEL_PRICES (pricing the configured model too) and the worker option', () => {
    const base = { HANDRAIL_MODEL: 'x-1', HANDRAIL_MODEL_BASE_URL: 'http://h/v1' };
    const prices = { 'x-1': { usdPerMTokIn: 1, usdPerMTokOut: 4 }, y: { usdPerMTokIn: 3, usdPerMTokOut: 9 } };
    const fromTable = modelConfigFromEnv({ ...base, HANDRAIL_MODEL_PRICES: JSON.stringify(prices) });
    expect(fromTable).toMatchObject({ usdPerMTokIn: 1, usdPerMTokOut: 4, prices });
    // The configured model's own settings win over its entry; a bad table is refused, named.
    expect(
      modelConfigFromEnv({
        ...base,
        HANDRAIL_MODEL_PRICES: JSON.stringify(prices),
        HANDRAIL_MODEL_USD_PER_MTOK_IN: '2',
        HANDRAIL_MODEL_USD_PER_MTOK_OUT: '5',
      }),
    ).toMatchObject({ usdPerMTokIn: 2, usdPerMTokOut: 5 });
    expect(() => modelConfigFromEnv({ ...base, HANDRAIL_MODEL_PRICES: '{"x-1":{"usdPerMTokIn":1}}' })).toThrow(
      /HANDRAIL_MODEL_PRICES: "x-1".usdPerMTokOut/,
    );
    // The worker's modelPrices add to the table; an entry for the configured model is its price.
    const option = withPrices(fromTable, { 'x-1': { usdPerMTokIn: 0.5, usdPerMTokOut: 2, usdPerMTokCached: 0.1 } });
    expect(option).toMatchObject({ usdPerMTokIn: 0.5, usdPerMTokOut: 2, usdPerMTokCached: 0.1 });
    expect(option?.prices?.y).toEqual(prices.y);
    expect(() => withPrices(fromTable, { z: { usdPerMTokIn: -1, usdPerMTokOut: 1 } })).toThrow(/modelPrices: "z"/);
  });
});

describe('draft and judge backed by the model', () => {
  let store: Store;
  beforeEach(async () => {
    store = await corpusStore();
  });
  afterEach(async () => {
    await store.close();
  });

  const grading = (request: SeenRequest) => request.body.messages[0]?.content.startsWith('You grade') ?? false;

  async function toDraft(relay: Relay) {
    const intake = await relay.run('intake', firstPackage(ticketRef(refundTicket)));
    return relay.run('retrieve', intake.package);
  }

  it('drafts with the model, charges its tokens, and the judge grades the answer with it', async () => {
    const markdown =
      '## Triage\n\nThe customer renewed an annual plan by mistake and asks how to get a refund. Annual plans are refundable pro rata ' +
      'within 30 days of renewal [refund-policy.2]; billing reviews the request [refund-policy.3]. Next: forward to billing with INV-2201.';
    answer = (request) =>
      grading(request) ? reply('{"answers_question": 0.9, "note": "covers it"}') : reply(markdown);
    const relay = new Relay(createActivities({ store, model: createChatModel(config) }));
    const draft = await relay.run('draft', (await toDraft(relay)).package);
    expect(SummaryMd.parse(draft.body)).toMatchObject({ markdown, cited_keys: ['refund-policy.2', 'refund-policy.3'] });
    expect(draft.cost_usd).toBe(0.004);
    expect(seen[0]?.body.messages[1]?.content).toContain('[refund-policy.2]');

    const judge = await relay.run('judge', draft.package);
    expect(VerdictV1.parse(judge.body)).toMatchObject({ verdict: 'pass', scores: { answers_question: 0.9 } });
    expect(judge.cost_usd).toBe(0.004);
  });

  it('keeps the hard rules when a model drafts: a refund promise and an invented key still fail', async () => {
    answer = (request) =>
      grading(request)
        ? reply('{"answers_question": 1}')
        : reply(
            'Annual plan refund: we will refund you in full today [refund-policy.2] as agreed in [refunds-faq.1]. The customer is happy.',
          );
    const activities = createActivities({ store, model: createChatModel(config) });
    const retrieved = await toDraft(new Relay(activities));
    // Called directly: the rail itself would already refuse this draft (constraints_enforced).
    const draft = await activities.draft({ stage: 'draft', package: retrieved.package, delivery_key: 'job_1:draft:2' });
    const judged = await activities.judge({ stage: 'judge', package: draft.package, delivery_key: 'job_1:judge:3' });
    const verdict = VerdictV1.parse(judged.body);
    expect(verdict.verdict).toBe('fail');
    expect(verdict.failures).toEqual([
      expect.stringMatching(/^citation_unknown: refunds-faq\.1/),
      expect.stringMatching(/^refund_promise/),
    ]);
  });

  it('sends the failures and the rejected draft on a revision, and never returns a rejected draft as is', async () => {
    const same =
      'Annual plan refunds are reviewed by billing within 30 days of renewal [refund-policy.2]. Forward it to billing.';
    answer = (request) => (grading(request) ? reply('{"answers_question": 0.2, "note": "vague"}') : reply(same));
    const relay = new Relay(createActivities({ store, model: createChatModel(config) }));
    const first = await relay.run('draft', (await toDraft(relay)).package);
    const failed = await relay.run('judge', first.package);
    expect(failed.package.evaluator.failures).toEqual(['off_topic: vague']);
    const revision = await relay.run('draft', failed.package);
    expect(seen.at(-1)?.body.messages[1]?.content).toMatch(
      /rejected the previous draft for: off_topic: vague[\s\S]*Rejected draft/,
    );
    expect(revision.artifact.uri).not.toBe(first.artifact.uri);
  });

  it('fails the stage non-retryably when the endpoint rejects the request, retryably when it is overloaded', async () => {
    const relay = new Relay(createActivities({ store, model: createChatModel(config) }));
    const retrieved = await toDraft(relay);
    answer = () => ({ status: 401, json: { error: { message: 'bad key' } } });
    const rejected = await relay.run('draft', retrieved.package).catch((e: unknown) => e);
    expect(rejected).toBeInstanceOf(ApplicationFailure);
    expect(rejected).toMatchObject({ type: 'ModelRejected', nonRetryable: true });
    answer = () => ({ status: 503, json: { error: { message: 'busy' } } });
    const busy = await relay.run('draft', retrieved.package).catch((e: unknown) => e);
    expect(busy).toBeInstanceOf(ModelError);
    expect(busy).not.toBeInstanceOf(ApplicationFailure);
  });

  it('fails the judge non-retryably on a grade that is not a number in 0..1', async () => {
    answer = (request) =>
      grading(request)
        ? reply('{"answers_question": "high"}')
        : reply('Annual plans: pro rata within 30 days [refund-policy.2]. Forward to billing.');
    const relay = new Relay(createActivities({ store, model: createChatModel(config) }));
    const draft = await relay.run('draft', (await toDraft(relay)).package);
    await expect(relay.run('judge', draft.package)).rejects.toMatchObject({
      type: 'ModelRejected',
      nonRetryable: true,
    });
  });
});
