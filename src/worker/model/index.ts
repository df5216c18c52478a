/**
 * The configured chat model, on the AI SDK (`ai` and `@ai-sdk/openai-compatible`): any server
 * speaking OpenAI's chat completions (OpenAI, vLLM, llama.cpp, Ollama's /v1, ...). Reports token
 * usage × configured price as cost, so the job's one wallet pays for model calls like everything
 * else. `complete` is one plain turn; model stages with tools and structured output use the same
 * `languageModel` through src/agents.
 *
 * Env: HANDRAIL_MODEL_BASE_URL (e.g. http://localhost:11434/v1), HANDRAIL_MODEL_API_KEY (optional
 * for local servers), HANDRAIL_MODEL, HANDRAIL_MODEL_USD_PER_MTOK_IN / _OUT (price per million
 * prompt / completion tokens), HANDRAIL_MODEL_TIMEOUT_MS.
 */
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { generateText, NoObjectGeneratedError, Output, type LanguageModel, type LanguageModelUsage } from 'ai';
import { asModelError, ModelError } from './errors';

export { ModelError } from './errors';

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export interface TokenUsage {
  /** Every prompt token, cached ones included. */
  prompt_tokens: number;
  completion_tokens: number;
  /** Of the prompt tokens, those read from the provider's cache (priced apart); absent: none. */
  cached_tokens?: number;
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
  /** What `usage` costs at this model's price. */
  readonly price?: (usage: TokenUsage) => number;
  /** How long one call (one step of a tool loop) may take. */
  readonly timeoutMs?: number;
  /** `signal` aborts the request (the stage was cancelled); the abort's reason is thrown as is. */
  complete(
    messages: readonly ChatMessage[],
    options?: { maxTokens?: number; json?: boolean; signal?: AbortSignal },
  ): Promise<ChatReply>;
}

export interface ModelConfig {
  baseUrl: string;
  apiKey?: string;
  model: string;
  usdPerMTokIn: number;
  usdPerMTokOut: number;
  /** Price of a cached prompt token (per million); unset: the prompt price. */
  usdPerMTokCached?: number;
  timeoutMs: number;
}

/** The configured model, or undefined when HANDRAIL_MODEL_BASE_URL / HANDRAIL_MODEL are unset. */
export function modelConfigFromEnv(env: NodeJS.ProcessEnv = process.env): ModelConfig | undefined {
  const baseUrl = env.HANDRAIL_MODEL_BASE_URL?.trim();
  const model = env.HANDRAIL_MODEL?.trim();
  if (!baseUrl && !model) return undefined;
  if (!baseUrl || !model) throw new Error('set both HANDRAIL_MODEL_BASE_URL and HANDRAIL_MODEL, or neither');
  return {
    baseUrl,
    apiKey: env.HANDRAIL_MODEL_API_KEY || undefined,
    model,
    usdPerMTokIn: price(env, 'HANDRAIL_MODEL_USD_PER_MTOK_IN'),
    usdPerMTokOut: price(env, 'HANDRAIL_MODEL_USD_PER_MTOK_OUT'),
    ...(env.HANDRAIL_MODEL_USD_PER_MTOK_CACHED
      ? { usdPerMTokCached: price(env, 'HANDRAIL_MODEL_USD_PER_MTOK_CACHED') }
      : {}),
    timeoutMs: Number(env.HANDRAIL_MODEL_TIMEOUT_MS || 60_000),
  };
}

/** A price must be stated: a model that costs nothing would let a job spend without limit. */
function price(env: NodeJS.ProcessEnv, name: string): number {
  const value = Number(env[name]);
  if (env[name] === undefined || env[name] === '' || !Number.isFinite(value) || value < 0) {
    throw new Error(
      `${name} must be set to the model's USD price per million tokens (0 or more) when a model is configured`,
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
  });
  return provider.chatModel(config.model);
}

export function createChatModel(config: ModelConfig): ChatModel {
  const languageModel = openAICompatibleModel(config);
  const priceOf = (usage: TokenUsage) => {
    const cached = usage.cached_tokens ?? 0;
    const uncached = usage.prompt_tokens - cached;
    const cachedPrice = config.usdPerMTokCached ?? config.usdPerMTokIn;
    return (
      (uncached * config.usdPerMTokIn + cached * cachedPrice + usage.completion_tokens * config.usdPerMTokOut) /
      1_000_000
    );
  };
  return {
    model: config.model,
    languageModel,
    price: priceOf,
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
        return { text: result.text, usage, cost_usd: priceOf(usage) };
      } catch (error) {
        if (options.signal?.aborted) throw options.signal.reason ?? error;
        // `json` asks the server for JSON; the stage reads (and judges) the text itself.
        if (NoObjectGeneratedError.isInstance(error) && error.text !== undefined && error.usage) {
          const usage = tokenUsage(error.usage);
          return { text: error.text, usage, cost_usd: priceOf(usage) };
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
