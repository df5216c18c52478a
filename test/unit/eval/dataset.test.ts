/** The JSONL dataset: cases and their repeats, the request defaults, and every bad line named. */
import { describe, expect, it } from 'vitest';
import { BUILT_IN_PIPELINES } from '../../../contracts/pipelines';
import { DatasetError, EVAL_DECISION_TIMEOUT, parseDataset } from '../../../src/eval/dataset';

const ticket = { id: 't1', customer_id: 'c1', subject: 'Refund?', body: 'Can I get a refund?' };
const line = (o: object) => JSON.stringify(o);
const parse = (text: string) => parseDataset(text, 'd.jsonl', BUILT_IN_PIPELINES);

describe('parseDataset', () => {
  it('an entry and its repeats, with the reference job around the ticket and a short decision timeout', () => {
    const cases = parse(
      `# comment\n\n${line({ case: 'refund', pipeline: 'support-routing', ticket, repeat: 2, expect: { status: 'completed', visits: ['billing'] } })}\n${line({ ticket })}`,
    );
    expect(cases.map((c) => c.case)).toEqual(['refund.1', 'refund.2', 'line-4']);
    expect(cases[0]!.request).toMatchObject({
      pipeline: 'support-routing',
      entry: ticket,
      budget: { usd: 1, revisions: 2 },
      decision_timeout: EVAL_DECISION_TIMEOUT,
    });
    expect(cases[0]!.request).not.toHaveProperty('job_id');
    expect(cases[0]!.expect).toEqual({ status: 'completed', visits: ['billing'] });
  });

  it.each([
    ['{nope', /d\.jsonl:1: not JSON/],
    [line({ case: 'a' }), /d\.jsonl:1: an entry needs "ticket"/],
    [line({ ticket, pipeline: 'nope' }), /pipeline "nope" is not among ticket-triage/],
    [line({ ticket: { id: 't' } }), /d\.jsonl:1: .*entry/],
    [line({ ticket, repeat: 0 }), /"repeat" must be a whole number/],
    [line({ ticket, case: 'has space' }), /"case" must be an id/],
    [line({ ticket, expect: { write: { matches: '(' } } }), /not a regular expression/],
    [`${line({ ticket, case: 'a' })}\n${line({ ticket, case: 'a' })}`, /case "a" appears twice/],
  ])('refuses %s', (text, message) => {
    expect(() => parse(text)).toThrow(DatasetError);
    expect(() => parse(text)).toThrow(message);
  });

  it('the shipped dataset: 50 jobs of each built-in pipeline', async () => {
    const fs = await import('node:fs');
    const cases = parseDataset(fs.readFileSync('data/eval/built-in.jsonl', 'utf8'), 'built-in', BUILT_IN_PIPELINES);
    for (const p of BUILT_IN_PIPELINES) expect(cases.filter((c) => c.request.pipeline === p.name)).toHaveLength(50);
  });
});
