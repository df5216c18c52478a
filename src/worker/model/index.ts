/**
 * The configured chat model, on the AI SDK (`ai` and `@ai-sdk/openai-compatible`): any server
 * speaking OpenAI's chat completions (OpenAI, vLLM, llama.cpp, Ollama's /v1, ...). Reports token
 * usage × configured price as cost, so the job's one wallet pays for model calls like everything
 * else. `complete` is one plain turn; model stages with tools and structured output use the same
 * `languageModel` through src/agents.
 *
 * Env: HANDRAIL_MODEL_BASE_URL (e.g. http://localhost:11434/v1), HANDRAIL_MODEL_API_KEY (optional
 * for local servers), HANDRAIL_MODEL, HANDRAIL_MODEL_USD_PER_MTOK_IN / _OUT / _CACHED (price per
 * million prompt / completion / cached prompt tokens), HANDRAIL_MODEL_PRICES (a JSON price table
 * by model id, for the models a reply may name), HANDRAIL_MODEL_TIMEOUT_MS.
 */
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { generateText, NoObjectGeneratedError, Output, type LanguageModel, type LanguageModelUsage } from 'ai';
import { asModelError, ModelError } from './errors';
import { streamingWhenFollowed } from './streaming';
import {
  parsePriceTable,
  priceFor,
  priceTableProblems,
  usageUsd,
  type ModelPrice,
  type PriceTable,
  type TokenUsage,
} from './pricing';

export { ModelError } from './errors';
export * from './pricing';

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export interface ChatReply {
  text: string;
  usage: TokenUsage;
  cost_usd: number;
}

export interface ChatModel {
  readonly model: string;
  /** The AI SDK model behind `complete`, for tool loops and structured output (src/agents). */
  readonly languageModel?: Exclude<LanguageModel, string>;
  /** What `usage` costs: at the price of `answeredBy` (the model id a reply names) when the
   * table has it, else at this model's own price. */
  readonly price?: (usage: TokenUsage, answeredBy?: string) => number;
  /** The prices this model's replies are charged at, by model id (this model's among them). */
  readonly prices?: PriceTable;
  /** How long one call (one step of a tool loop) may take. */
  readonly timeoutMs?: number;
  /** `signal` aborts the request (the stage was cancelled); the abort's reason is thrown as is. */
  complete(
    messages: readonly ChatMessage[],
    options?: { maxTokens?: number; json?: boolean; signal?: AbortSignal },
  ): Promise<ChatReply>;
}

export interface ModelConfig extends ModelPrice {
  baseUrl: string;
  apiKey?: string;
  model: string;
  /** Prices of other model ids a reply may name (a router's pick, a dated snapshot); `model`'s own
   * price is the fields above. */
  prices?: PriceTable;
  timeoutMs: number;
}

/** The configured model, or undefined when HANDRAIL_MODEL_BASE_URL / HANDRAIL_MODEL are unset.
 * Its own price is HANDRAIL_MODEL_USD_PER_MTOK_*, or its entry in HANDRAIL_MODEL_PRICES when
 * those are unset. */
export function modelConfigFromEnv(env: NodeJS.ProcessEnv = process.env): ModelConfig | undefined {
  const baseUrl = env.HANDRAIL_MODEL_BASE_URL?.trim();
  const model = env.HANDRAIL_MODEL?.trim();
  if (!baseUrl && !model) return undefined;
  if (!baseUrl || !model) throw new Error('set both HANDRAIL_MODEL_BASE_URL and HANDRAIL_MODEL, or neither');
  const prices = env.HANDRAIL_MODEL_PRICES?.trim()
    ? parsePriceTable(env.HANDRAIL_MODEL_PRICES, 'HANDRAIL_MODEL_PRICES')
    : undefined;
  const listed = prices && priceFor(prices, model);
  const own: ModelPrice =
    listed && env.HANDRAIL_MODEL_USD_PER_MTOK_IN === undefined && env.HANDRAIL_MODEL_USD_PER_MTOK_OUT === undefined
      ? listed
      : {
          usdPerMTokIn: price(env, 'HANDRAIL_MODEL_USD_PER_MTOK_IN'),
          usdPerMTokOut: price(env, 'HANDRAIL_MODEL_USD_PER_MTOK_OUT'),
          ...(env.HANDRAIL_MODEL_USD_PER_MTOK_CACHED
            ? { usdPerMTokCached: price(env, 'HANDRAIL_MODEL_USD_PER_MTOK_CACHED') }
            : {}),
        };
  return {
    baseUrl,
    apiKey: env.HANDRAIL_MODEL_API_KEY || undefined,
    model,
    ...own,
    ...(prices ? { prices } : {}),
    timeoutMs: Number(env.HANDRAIL_MODEL_TIMEOUT_MS || 60_000),
  };
}

/** `config` with `prices` added to its table (an entry of `prices` wins); refuses a bad table. */
export function withPrices(config: ModelConfig | undefined, prices: PriceTable | undefined): ModelConfig | undefined {
  if (!config || !prices) return config;
  const problems = priceTableProblems(prices, "the worker's modelPrices");
  if (problems.length > 0) throw new Error(problems.join('; '));
  const own = Object.hasOwn(prices, config.model) ? prices[config.model] : undefined;
  const { usdPerMTokCached: _replaced, ...rest } = config;
  return { ...(own ? { ...rest, ...own } : config), prices: { ...config.prices, ...prices } };
}

/** A price must be stated: a model that costs nothing would let a job spend without limit. */
function price(env: NodeJS.ProcessEnv, name: string): number {
  const value = Number(env[name]);
  if (env[name] === undefined || env[name] === '' || !Number.isFinite(value) || value < 0) {
    throw new Error(
      `${name} must be set to the model's USD price per million tokens (0 or more) when a model is configured (or price HANDRAIL_MODEL in HANDRAIL_MODEL_PRICES)`,
    );
  }
  return value;
}

/** The AI SDK model for an OpenAI-compatible endpoint. */
export function openAICompatibleModel(
  config: Pick<ModelConfig, 'baseUrl' | 'apiKey' | 'model'>,
): Exclude<LanguageModel, string> {
  const provider = createOpenAICompatible({
    name: 'handrail',
    baseURL: config.baseUrl.replace(/\/+$/, ''),
    ...(config.apiKey ? { apiKey: config.apiKey } : {}),
    supportsStructuredOutputs: true,
    // A followed hop streams (streaming.ts): the wallet needs the usage at the stream's end too.
    includeUsage: true,
  });
  return streamingWhenFollowed(provider.chatModel(config.model));
}

export function createChatModel(config: ModelConfig): ChatModel {
  const languageModel = openAICompatibleModel(config);
  const own: ModelPrice = {
    usdPerMTokIn: config.usdPerMTokIn,
    usdPerMTokOut: config.usdPerMTokOut,
    ...(config.usdPerMTokCached === undefined ? {} : { usdPerMTokCached: config.usdPerMTokCached }),
  };
  const prices: PriceTable = { ...config.prices, [config.model]: own };
  // A reply naming a model the table does not price is charged at the configured model's price.
  const priceOf = (usage: TokenUsage, answeredBy?: string) =>
    usageUsd((answeredBy === undefined ? undefined : priceFor(prices, answeredBy)) ?? own, usage);
  return {
    model: config.model,
    languageModel,
    price: priceOf,
    prices,
    timeoutMs: config.timeoutMs,
    async complete(messages, options = {}) {
      const signal = options.signal
        ? AbortSignal.any([AbortSignal.timeout(config.timeoutMs), options.signal])
        : AbortSignal.timeout(config.timeoutMs);
      try {
        const result = await generateText({
          model: languageModel,
          messages: [...messages],
          allowSystemInMessages: true,
          temperature: 0,
          // Temporal's retry policy retries the activity; the SDK's own retries would pay twice.
          maxRetries: 0,
          abortSignal: signal,
          ...(options.maxTokens ? { maxOutputTokens: options.maxTokens } : {}),
          ...(options.json ? { output: Output.json() } : {}),
        });
        const usage = tokenUsage(result.usage);
        return { text: result.text, usage, cost_usd: priceOf(usage, result.response.modelId) };
      } catch (error) {
        if (options.signal?.aborted) throw options.signal.reason ?? error;
        // `json` asks the server for JSON; the stage reads (and judges) the text itself.
        if (NoObjectGeneratedError.isInstance(error) && error.text !== undefined && error.usage) {
          const usage = tokenUsage(error.usage);
          return { text: error.text, usage, cost_usd: priceOf(usage, error.response?.modelId) };
        }
        throw asModelError(error);
      }
    },
  };
}

/** Without usage the call cannot be charged to the wallet: fail closed rather than spend free. */
export function tokenUsage(usage: LanguageModelUsage): TokenUsage {
  const prompt = usage.inputTokens;
  const completion = usage.outputTokens;
  if (!isTokenCount(prompt) || !isTokenCount(completion))
    throw new ModelError('model reply reports no token usage', false);
  const cached = usage.inputTokenDetails?.cacheReadTokens;
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    ...(isTokenCount(cached) && cached > 0 ? { cached_tokens: Math.min(cached, prompt) } : {}),
  };
}

function isTokenCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0;
}
