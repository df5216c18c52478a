/**
 * What model tokens cost: a price table keyed by model id, and a call's cost as its usage
 * (prompt, cached prompt, completion tokens) at the price of the model that answered. Pure: the
 * worker's model prices every reply with it, and a model stage's loop checks its reservation with
 * it before each step.
 *
 * No vendor prices ship with handrail: they change, and a stale default would make the wallet
 * pay less than the provider bills. The worker's table holds what its operator configured (the
 * configured model's HANDRAIL_MODEL_USD_PER_MTOK_* prices, and HANDRAIL_MODEL_PRICES or the
 * worker's `modelPrices` for others).
 */

/** USD per million tokens. */
export interface ModelPrice {
  usdPerMTokIn: number;
  usdPerMTokOut: number;
  /** A prompt token the provider read from its cache; unset: the prompt price. */
  usdPerMTokCached?: number;
}

/** Prices by model id. A dated or suffixed id (`gpt-4o-mini-2024-07-18`) is priced as the
 * longest id in the table it extends at a `-`, `:` or `@` (`gpt-4o-mini`). */
export type PriceTable = Readonly<Record<string, ModelPrice>>;

export interface TokenUsage {
  /** Every prompt token, cached ones included. */
  prompt_tokens: number;
  completion_tokens: number;
  /** Of the prompt tokens, those read from the provider's cache (priced apart); absent: none. */
  cached_tokens?: number;
}

/** The price of `modelId` in `table`: its own entry, else the longest id it extends; undefined: unpriced. */
export function priceFor(table: PriceTable, modelId: string): ModelPrice | undefined {
  const own = Object.hasOwn(table, modelId) ? table[modelId] : undefined;
  if (own) return own;
  const extended = Object.keys(table)
    .filter((id) => modelId.length > id.length && modelId.startsWith(id) && '-:@'.includes(modelId[id.length]!))
    .sort((a, b) => b.length - a.length)[0];
  return extended === undefined ? undefined : table[extended];
}

/** What `usage` costs at `price`: uncached prompt, cached prompt and completion tokens apart. */
export function usageUsd(price: ModelPrice, usage: TokenUsage): number {
  const cached = Math.min(usage.cached_tokens ?? 0, usage.prompt_tokens);
  const uncached = usage.prompt_tokens - cached;
  return (
    (uncached * price.usdPerMTokIn +
      cached * (price.usdPerMTokCached ?? price.usdPerMTokIn) +
      usage.completion_tokens * price.usdPerMTokOut) /
    1_000_000
  );
}

/**
 * The most a tool loop can cost: each of `maxSteps` steps sends at most `maxPromptTokens` (none
 * read from cache) and answers at most `maxOutputTokens`, and calls tools for at most
 * `maxToolUsdPerStep`. What a model stage's card should reserve (`worstCaseCostUsd`) unless it
 * caps the stage lower.
 */
export function loopWorstCaseUsd(
  price: ModelPrice,
  bounds: { maxSteps: number; maxPromptTokens: number; maxOutputTokens: number; maxToolUsdPerStep?: number },
): number {
  const step = usageUsd(price, { prompt_tokens: bounds.maxPromptTokens, completion_tokens: bounds.maxOutputTokens });
  return bounds.maxSteps * (step + (bounds.maxToolUsdPerStep ?? 0));
}

/** What is wrong with a price table, each problem said (none: it can price). */
export function priceTableProblems(table: unknown, source: string): string[] {
  if (table === null || typeof table !== 'object' || Array.isArray(table))
    return [`${source} must be an object of model id → { usdPerMTokIn, usdPerMTokOut, usdPerMTokCached? }`];
  const problems: string[] = [];
  for (const [id, price] of Object.entries(table as Record<string, unknown>)) {
    if (id.trim() === '') problems.push(`${source} has an empty model id`);
    const fields = (price ?? {}) as Record<string, unknown>;
    for (const field of ['usdPerMTokIn', 'usdPerMTokOut', 'usdPerMTokCached'] as const) {
      const value = fields[field];
      if (value === undefined && field === 'usdPerMTokCached') continue;
      if (typeof value !== 'number' || !Number.isFinite(value) || value < 0)
        problems.push(`${source}: "${id}".${field} must be a USD price per million tokens (a number, 0 or more)`);
    }
  }
  return problems;
}

/** A table from its JSON text (HANDRAIL_MODEL_PRICES), or an error naming every problem. */
export function parsePriceTable(json: string, source: string): PriceTable {
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch (error) {
    throw new Error(`${source} is not JSON: ${error instanceof Error ? error.message : String(error)}`);
  }
  const problems = priceTableProblems(parsed, source);
  if (problems.length > 0) throw new Error(problems.join('; '));
  return parsed as PriceTable;
}
