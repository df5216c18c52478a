/** fitHandover: the edge's token cap, its materialize fallback, and the refusal. */
import { existsSync } from 'node:fs';
import { countTokens } from 'gpt-tokenizer';
import { describe, expect, it } from 'vitest';
import { assistantMessage, type Edge } from '../../../contracts';
import { applyHandover, ContextBudgetExceeded, fitHandover, handoverTokens } from '../../../activities/handover';
import { edge, prompt, scratch, state, tag, thrown, workedExample } from './helpers';

const QUESTION = 'Draft the reply.';
const bigLog = [
  ...workedExample,
  prompt('Explain in depth.'),
  tag('reasoner', assistantMessage('mechanism '.repeat(3000))),
];

/** A turnDir thunk that counts its calls. */
function lazyDir() {
  const dir = scratch();
  const thunk = Object.assign(() => (thunk.calls++, dir), { calls: 0 });
  return thunk;
}

const refusal = (run: () => unknown) => thrown(run, ContextBudgetExceeded);

describe('handoverTokens', () => {
  it('counts the question plus the text of every history message', () => {
    const result = applyHandover(edge('history'), workedExample, state(), QUESTION)!;
    const texts = [QUESTION, ...workedExample.map((m) => (m.message.content[0] as { text: string }).text)];
    expect(handoverTokens(result)).toBe(texts.reduce((n, t) => n + countTokens(t), 0));
  });
});

describe('fitHandover', () => {
  it('passes a bare edge (and no edge) through without a workspace', () => {
    const dir = lazyDir();
    expect(fitHandover(undefined, workedExample, state(), QUESTION, dir)).toEqual({
      result: undefined,
      used: undefined,
      tokens: 0,
      fellBack: false,
    });
    expect(fitHandover(edge(undefined), workedExample, state(), QUESTION, dir)).toEqual({
      result: undefined,
      used: undefined,
      tokens: 0,
      fellBack: false,
    });
    expect(dir.calls).toBe(0);
  });

  it('under the cap: the handover as configured, with its token count, and no workspace made', () => {
    const dir = lazyDir();
    const fitted = fitHandover(
      edge('transcript_prepend', { maxTokens: 1000, overflow: 'transcript_materialize' }),
      workedExample,
      state(),
      QUESTION,
      dir,
    );
    const expected = applyHandover(edge('transcript_prepend'), workedExample, state(), QUESTION)!;
    expect(fitted).toEqual({
      result: expected,
      used: 'transcript_prepend',
      tokens: handoverTokens(expected),
      fellBack: false,
    });
    expect(dir.calls).toBe(0);
  });

  it('counts tokens without a cap too', () => {
    const fitted = fitHandover(
      edge({ callable: 'last' }, { callable: (log) => [log.at(-1)!.message] }),
      workedExample,
      state(),
      QUESTION,
    );
    expect(fitted).toMatchObject({
      used: 'callable:last',
      tokens: countTokens(QUESTION) + countTokens('Venetoclax is a BCL-2 inhibitor.'),
      fellBack: false,
    });
  });

  it('over the cap with overflow materialize: falls back to a trace file in the workspace', () => {
    const dir = lazyDir();
    const fitted = fitHandover(
      edge('transcript_prepend', { maxTokens: 500, overflow: 'transcript_materialize' }),
      bigLog,
      state(),
      QUESTION,
      dir,
    );
    expect(fitted).toMatchObject({ used: 'transcript_materialize', fellBack: true, result: { history: [] } });
    expect(fitted.result!.questionText.endsWith(`---\n\n${QUESTION}`)).toBe(true);
    expect(fitted.tokens).toBe(handoverTokens(fitted.result!));
    expect(fitted.tokens).toBeLessThanOrEqual(500);
    expect(dir.calls).toBe(1);
    const tracePath = /^Trace file path: (.+)$/m.exec(fitted.result!.questionText)![1]!;
    expect(tracePath.startsWith(dir())).toBe(true);
    expect(existsSync(tracePath)).toBe(true);
  });

  it('history over the cap falls back the same way', () => {
    const fitted = fitHandover(
      edge('history', { maxTokens: 500, overflow: 'transcript_materialize' }),
      bigLog,
      state(),
      QUESTION,
      scratch(),
    );
    expect(fitted).toMatchObject({ used: 'transcript_materialize', fellBack: true, result: { history: [] } });
  });

  it.each([
    ['refuse', { overflow: 'refuse' }],
    ['no overflow (refuse is the default)', {}],
  ] as const)('over the cap with %s → ContextBudgetExceeded carrying the tokens', (_what, over: Partial<Edge>) => {
    const dir = lazyDir();
    const capped = edge('transcript_prepend', { maxTokens: 2000, ...over });
    const tokens = handoverTokens(applyHandover(capped, bigLog, state(), QUESTION)!);
    const err = refusal(() => fitHandover(capped, bigLog, state(), QUESTION, dir));
    expect(err).toMatchObject({
      name: 'ContextBudgetExceeded',
      code: 'context_budget_exceeded',
      tokens,
      maxTokens: 2000,
      strategy: 'transcript_prepend',
    });
    expect(err.message).toBe(
      `the handover on judge → draft is ${tokens.toLocaleString('en-US')} tokens, over the edge's cap of 2,000 (strategy transcript_prepend)`,
    );
    expect(tokens).toBeGreaterThan(2000);
    expect(dir.calls).toBe(0);
  });

  it('a materialize edge over its cap is refused without a second try', () => {
    const question = 'why '.repeat(800);
    const err = refusal(() =>
      fitHandover(
        edge('transcript_materialize', { maxTokens: 100, overflow: 'transcript_materialize' }),
        workedExample,
        state(),
        question,
        scratch(),
      ),
    );
    expect(err).toMatchObject({ strategy: 'transcript_materialize', maxTokens: 100 });
  });

  it('a question alone over the cap is refused even after the fallback', () => {
    const question = 'why '.repeat(800);
    const capped = edge('transcript_append', { maxTokens: 100, overflow: 'transcript_materialize' });
    const err = refusal(() => fitHandover(capped, workedExample, state(), question, scratch()));
    expect(err).toMatchObject({ code: 'context_budget_exceeded', maxTokens: 100, strategy: 'transcript_materialize' });
    expect(err.tokens).toBeGreaterThan(countTokens(question));
    expect(err.message).toBe(
      `the handover on judge → draft is ${err.tokens.toLocaleString('en-US')} tokens, over the edge's cap of 100 (strategy transcript_materialize, the overflow fallback after transcript_append was over too)`,
    );
  });
});
