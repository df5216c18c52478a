/**
 * A chat model behind an OpenAI-compatible `POST <base>/chat/completions` endpoint (OpenAI,
 * vLLM, llama.cpp, Ollama's /v1, ...). Reports token usage × configured price as cost, so the
 * job's one wallet pays for model calls like everything else.
 *
 * Env: HANDRAIL_MODEL_BASE_URL (e.g. http://localhost:11434/v1), HANDRAIL_MODEL_API_KEY (optional
 * for local servers), HANDRAIL_MODEL, HANDRAIL_MODEL_USD_PER_MTOK_IN / _OUT (price per million
 * prompt / completion tokens), HANDRAIL_MODEL_TIMEOUT_MS.
 */

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export interface TokenUsage {
  prompt_tokens: number;
  completion_tokens: number;
}

export interface ChatReply {
  text: string;
  usage: TokenUsage;
  cost_usd: number;
}

export interface ChatModel {
  readonly model: string;
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
  timeoutMs: number;
}

/**
 * `retryable` false: the request itself is wrong (auth, unknown model, bad reply shape) and
 * sending it again cannot help. true: overload, server error, timeout, network.
 */
export class ModelError extends Error {
  override readonly name = 'ModelError';
  constructor(
    message: string,
    readonly retryable: boolean,
    readonly status?: number,
  ) {
    super(message);
  }
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

export function createChatModel(config: ModelConfig): ChatModel {
  const url = `${config.baseUrl.replace(/\/+$/, '')}/chat/completions`;
  return {
    model: config.model,
    async complete(messages, options = {}) {
      let response: Response;
      try {
        response = await fetch(url, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            ...(config.apiKey ? { authorization: `Bearer ${config.apiKey}` } : {}),
          },
          body: JSON.stringify({
            model: config.model,
            messages,
            temperature: 0,
            ...(options.maxTokens ? { max_tokens: options.maxTokens } : {}),
            ...(options.json ? { response_format: { type: 'json_object' } } : {}),
          }),
          signal: options.signal
            ? AbortSignal.any([AbortSignal.timeout(config.timeoutMs), options.signal])
            : AbortSignal.timeout(config.timeoutMs),
        });
      } catch (error) {
        if (options.signal?.aborted) throw options.signal.reason ?? error;
        throw new ModelError(`model endpoint unreachable: ${(error as Error).message}`, true);
      }
      const raw = await response.text();
      if (!response.ok) {
        // 408/409/429 and 5xx are the server's weather; other 4xx are our request.
        const retryable = response.status >= 500 || [408, 409, 429].includes(response.status);
        throw new ModelError(
          `model endpoint answered ${response.status}: ${raw.slice(0, 300)}`,
          retryable,
          response.status,
        );
      }
      return parseReply(raw, config);
    },
  };
}

function parseReply(raw: string, config: ModelConfig): ChatReply {
  let json: {
    choices?: { message?: { content?: unknown } }[];
    usage?: { prompt_tokens?: unknown; completion_tokens?: unknown };
  };
  try {
    json = JSON.parse(raw) as typeof json;
  } catch {
    throw new ModelError('model reply is not JSON', false);
  }
  const text = json.choices?.[0]?.message?.content;
  if (typeof text !== 'string') throw new ModelError('model reply has no choices[0].message.content', false);
  const prompt = json.usage?.prompt_tokens;
  const completion = json.usage?.completion_tokens;
  // Without usage the call cannot be charged to the wallet: fail closed rather than spend free.
  if (!isTokenCount(prompt) || !isTokenCount(completion))
    throw new ModelError('model reply reports no token usage', false);
  const cost = (prompt * config.usdPerMTokIn + completion * config.usdPerMTokOut) / 1_000_000;
  return { text, usage: { prompt_tokens: prompt, completion_tokens: completion }, cost_usd: cost };
}

function isTokenCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0;
}
