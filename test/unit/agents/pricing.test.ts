/** The price table: a model id's price (its own entry, or the id it extends), a call's cost from
 * its usage, a tool loop's worst case, and a table's problems. */
import { describe, expect, it } from 'vitest';
import {
  loopWorstCaseUsd,
  parsePriceTable,
  priceFor,
  priceTableProblems,
  usageUsd,
  type PriceTable,
} from '../../../src/worker/model/pricing';

const table: PriceTable = {
  'gpt-4o': { usdPerMTokIn: 2.5, usdPerMTokOut: 10, usdPerMTokCached: 1.25 },
  'gpt-4o-mini': { usdPerMTokIn: 0.15, usdPerMTokOut: 0.6 },
  'llama3.1:8b': { usdPerMTokIn: 0, usdPerMTokOut: 0 },
};

describe('priceFor', () => {
  it("prices a model id by its own entry, else by the longest id it extends at '-', ':' or '@'", () => {
    expect(priceFor(table, 'gpt-4o-mini')).toBe(table['gpt-4o-mini']);
    expect(priceFor(table, 'gpt-4o-mini-2024-07-18')).toBe(table['gpt-4o-mini']);
    expect(priceFor(table, 'gpt-4o-2024-08-06')).toBe(table['gpt-4o']);
    expect(priceFor(table, 'gpt-4o@eu')).toBe(table['gpt-4o']);
    expect(priceFor(table, 'llama3.1:8b:q4')).toBe(table['llama3.1:8b']);
  });

  it('leaves an id it does not price unpriced, even one that merely starts like a priced id', () => {
    expect(priceFor(table, 'gpt-4omni')).toBeUndefined();
    expect(priceFor(table, 'gpt')).toBeUndefined();
    expect(priceFor(table, 'toString')).toBeUndefined();
  });
});

describe('usageUsd', () => {
  it('prices uncached prompt, cached prompt and completion tokens apart', () => {
    // 400 uncached at $2.5/M, 600 cached at $1.25/M, 200 completion at $10/M.
    expect(
      usageUsd(table['gpt-4o']!, { prompt_tokens: 1_000, completion_tokens: 200, cached_tokens: 600 }),
    ).toBeCloseTo(0.00375, 12);
  });

  it('prices a cached token at the prompt price when the model has no cached price, and never more cached than sent', () => {
    const mini = table['gpt-4o-mini']!;
    expect(usageUsd(mini, { prompt_tokens: 1_000, completion_tokens: 0, cached_tokens: 1_000 })).toBeCloseTo(
      usageUsd(mini, { prompt_tokens: 1_000, completion_tokens: 0 }),
      12,
    );
    expect(usageUsd(table['gpt-4o']!, { prompt_tokens: 100, completion_tokens: 0, cached_tokens: 500 })).toBeCloseTo(
      (100 * 1.25) / 1_000_000,
      12,
    );
  });
});

describe('loopWorstCaseUsd', () => {
  it('is max steps × (max prompt + max output tokens at the price, and the tools a step may call)', () => {
    const bounds = { maxSteps: 5, maxPromptTokens: 8_000, maxOutputTokens: 1_000 };
    // A step: 8,000 × $2.5/M + 1,000 × $10/M = $0.03; five steps $0.15.
    expect(loopWorstCaseUsd(table['gpt-4o']!, bounds)).toBeCloseTo(0.15, 12);
    expect(loopWorstCaseUsd(table['gpt-4o']!, { ...bounds, maxToolUsdPerStep: 0.002 })).toBeCloseTo(0.16, 12);
  });
});

describe('price table problems', () => {
  it('names each bad price, and parses a good table from JSON', () => {
    expect(
      priceTableProblems(
        {
          a: { usdPerMTokIn: -1, usdPerMTokOut: 'x' },
          b: { usdPerMTokIn: 1, usdPerMTokOut: 2, usdPerMTokCached: NaN },
        },
        'T',
      ),
    ).toEqual([
      'T: "a".usdPerMTokIn must be a USD price per million tokens (a number, 0 or more)',
      'T: "a".usdPerMTokOut must be a USD price per million tokens (a number, 0 or more)',
      'T: "b".usdPerMTokCached must be a USD price per million tokens (a number, 0 or more)',
    ]);
    expect(priceTableProblems([], 'T')).toEqual([expect.stringMatching(/^T must be an object of model id/)]);
    expect(() => parsePriceTable('{', 'HANDRAIL_MODEL_PRICES')).toThrow(/HANDRAIL_MODEL_PRICES is not JSON/);
    expect(() => parsePriceTable('{"m":{"usdPerMTokIn":1}}', 'HANDRAIL_MODEL_PRICES')).toThrow(/"m".usdPerMTokOut/);
    expect(parsePriceTable(JSON.stringify(table), 'HANDRAIL_MODEL_PRICES')).toEqual(table);
  });
});
