/**
 * `eval compare` and its gates, on two small runs: the table's deltas, the jobs that changed most,
 * the moved jobs, each gate form passing and failing where it should, and the HTML report's plots.
 */
import { describe, expect, it } from 'vitest';
import { compareRuns } from '../../../src/eval/compare';
import { comparisonText } from '../../../src/eval/format';
import { GateSyntaxError, checkGate, parseGate } from '../../../src/eval/gate';
import { htmlReport } from '../../../src/eval/report-html';
import { summarize } from '../../../src/eval/stats';
import type { EvalRun, ScoredJob } from '../../../src/eval/types';

const SCORERS = [
  { name: 'pass_rate', description: '', unit: 'rate' as const },
  { name: 'cost_per_job', description: '', unit: 'usd' as const },
];

function job(c: string, pass: number, cost: number, path = ['classify', 'general']): ScoredJob {
  return {
    case: c,
    job_id: `x-${c}`,
    source: 'fresh',
    pipeline: 'support-routing',
    status: 'completed',
    path,
    scores: { pass_rate: pass, cost_per_job: cost },
  };
}

function run(jobs: ScoredJob[], commit: string): EvalRun {
  return {
    format: 'handrail.eval.v1',
    build: { commit, pipelines: {}, handrail: '0.1.0' },
    started_at: '2026-01-01T00:00:00Z',
    duration_ms: 1,
    dataset: { histories: 0, fresh: jobs.length, sources: [] },
    scorers: SCORERS,
    summary: summarize(jobs, SCORERS),
    jobs,
  };
}

// B: job c2 now goes to billing and fails its review; every job costs 10% more.
const A = run([job('c1', 1, 0.01), job('c2', 1, 0.01), job('c3', 1, 0.01), job('c4', 0.5, 0.02)], 'aaa');
const B = run(
  [job('c1', 1, 0.011), job('c2', 0, 0.011, ['classify', 'billing']), job('c3', 1, 0.011), job('c4', 0.5, 0.022)],
  'bbb',
);

describe('compareRuns', () => {
  const c = compareRuns(A, B);
  it('deltas per scorer, the jobs that changed most first, and the moved job', () => {
    const pass = c.scorers.find((s) => s.name === 'pass_rate')!;
    expect(pass.delta).toBe(-0.25);
    expect(pass.changed).toEqual([{ case: 'c2', pipeline: 'support-routing', a: 1, b: 0, delta: -1 }]);
    const cost = c.scorers.find((s) => s.name === 'cost_per_job')!;
    expect(cost.delta_pct).toBeCloseTo(10, 6);
    expect(cost.changed[0]).toMatchObject({ case: 'c4', delta: 0.002 });
    expect(c.moved).toEqual([
      {
        case: 'c2',
        pipeline: 'support-routing',
        a: { status: 'completed', path: ['classify', 'general'] },
        b: { status: 'completed', path: ['classify', 'billing'] },
      },
    ]);
    const text = comparisonText(c);
    expect(text).toMatch(/pass_rate\s+87\.5%\s+62\.5%\s+-25pt/);
    expect(text).toContain('classify>general → completed');
  });

  it('unmatched cases are counted, not compared', () => {
    const d = compareRuns(A, run([...B.jobs, job('c5', 1, 0.01)], 'bbb'));
    expect(d).toMatchObject({ matched: 4, only_a: [], only_b: ['c5'] });
  });
});

describe('gates', () => {
  const c = compareRuns(A, B);
  const check = (g: string) => checkGate(parseGate(g), c);

  it.each([
    ['pass_rate>=-2pt', false],
    ['pass_rate>=-30pt', true],
    ['cost_per_job<=+10%', true],
    ['cost_per_job<=+9%', false],
    ['cost_per_job.p95<=+0.002', true],
    ['pass_rate>=0.6', true],
    ['pass_rate.p50>=0.5', true],
    ['pass_rate.p50>=1', false],
    ['moved_jobs<=0', false],
    ['moved_jobs<=1', true],
  ])('%s → %s', (gate, ok) => {
    expect(check(gate).ok).toBe(ok);
  });

  it('says what it measured', () => {
    expect(check('pass_rate>=-2pt').why).toBe('pass_rate.mean changed by -25pt; the gate wants >= -2pt');
  });

  it('a gate with nothing to measure fails and says why', () => {
    expect(check('pas_rate>=-2pt')).toMatchObject({ ok: false, why: 'no scorer named pas_rate in either run' });
    expect(check('cost_per_job>=-2pt')).toMatchObject({ ok: false, why: expect.stringMatching(/not a rate/) });
  });

  it.each(['pass_rate', 'pass_rate>=2pt', 'pass_rate=>-2', 'pass_rate.p99>=1', 'Pass>=1'])('refuses "%s"', (g) => {
    expect(() => parseGate(g)).toThrow(GateSyntaxError);
  });
});

describe('htmlReport', () => {
  it('is one file with no outside reference: a point per job and build, a distribution per scorer, the gates', () => {
    const c = compareRuns(A, B);
    const html = htmlReport(c, [check(c, 'pass_rate>=-2pt')]);
    expect(html).not.toMatch(/<script|<link|src=|url\(/);
    expect(html.match(/class="job-point"/g)).toHaveLength(8);
    expect(html).toContain('data-scorer="pass_rate"');
    expect(html).toContain('1 of 1 gate(s) failed');
  });
});

function check(c: ReturnType<typeof compareRuns>, g: string) {
  return checkGate(parseGate(g), c);
}

describe('compareRuns over matched jobs', () => {
  it("a job only one run has does not move the scorer's means", () => {
    const c = compareRuns(run([...A.jobs, job('extra', 0, 1)], 'aaa'), A);
    expect(c.scorers.find((s) => s.name === 'pass_rate')).toMatchObject({ delta: 0, changed: [] });
  });
});
