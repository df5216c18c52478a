/** `handrail eval` and `eval compare` as text: pure. */
import { table } from '../operator/cli/format';
import type { Comparison, ScorerComparison } from './compare';
import type { GateResult } from './gate';
import type { EvalRun, ScoreStats, Scorer } from './types';

/** A value in its scorer's unit: rates in percent, money in dollars, the rest as numbers. */
export function valueText(unit: Scorer['unit'], n: number | undefined): string {
  if (n === undefined || !Number.isFinite(n)) return '-';
  if (unit === 'rate') return `${Number((n * 100).toFixed(1))}%`;
  if (unit === 'usd') return `$${Number(n.toFixed(6))}`;
  return String(Number(n.toFixed(unit === 'ms' ? 0 : 3)));
}

function deltaText(s: ScorerComparison): string {
  if (s.delta === undefined) return '-';
  const sign = s.delta > 0 ? '+' : '';
  const main =
    s.unit === 'rate' ? `${sign}${Number((s.delta * 100).toFixed(1))}pt` : `${sign}${valueText(s.unit, s.delta)}`;
  return s.delta_pct === undefined || s.unit === 'rate' ? main : `${main} (${sign}${Number(s.delta_pct.toFixed(1))}%)`;
}

const spread = (unit: Scorer['unit'], s: ScoreStats | undefined) =>
  s ? `${valueText(unit, s.p50)} / ${valueText(unit, s.p95)}` : '-';

/** One run's summary: a row per scorer. */
export function runText(run: EvalRun): string {
  const units = new Map(run.scorers.map((s) => [s.name, s.unit]));
  const head = `eval of ${run.jobs.length} jobs (${run.dataset.histories} recorded, ${run.dataset.fresh} fresh) in ${(run.duration_ms / 1000).toFixed(1)}s · build ${run.build.commit?.slice(0, 12) ?? 'unknown'}${run.build.dirty ? '+dirty' : ''}`;
  const rows = Object.entries(run.summary).map(([name, s]) => {
    const unit = units.get(name) ?? 'score';
    return [name, s.n, valueText(unit, s.mean), valueText(unit, s.p50), valueText(unit, s.p95)];
  });
  return `${head}\n${table(['SCORER', 'N', 'MEAN', 'P50', 'P95'], rows)}`;
}

const buildName = (b: Comparison['a']['build']) =>
  `${b.commit?.slice(0, 12) ?? 'unknown'}${b.dirty ? '+dirty' : ''}${b.module ? ` (${b.module})` : ''}`;

/** The comparison's table, the jobs that changed most per scorer, the moved jobs and the gates. */
export function comparisonText(c: Comparison, gates: readonly GateResult[] = []): string {
  const out = [
    `A: ${buildName(c.a.build)} · ${c.a.jobs} jobs    B: ${buildName(c.b.build)} · ${c.b.jobs} jobs    matched ${c.matched}`,
    table(
      ['SCORER', 'A MEAN', 'B MEAN', 'DELTA', 'A P50/P95', 'B P50/P95', 'CHANGED'],
      c.scorers.map((s) => [
        s.name,
        valueText(s.unit, s.a?.mean),
        valueText(s.unit, s.b?.mean),
        deltaText(s),
        spread(s.unit, s.a),
        spread(s.unit, s.b),
        s.changed.length,
      ]),
    ),
  ];
  const changed = c.scorers.filter((s) => s.changed.length > 0);
  if (changed.length > 0) {
    out.push('\nJobs that changed most:');
    out.push(
      table(
        ['SCORER', 'CASE', 'PIPELINE', 'A', 'B'],
        changed.flatMap((s) =>
          s.changed.map((j) => [s.name, j.case, j.pipeline, valueText(s.unit, j.a), valueText(s.unit, j.b)]),
        ),
      ),
    );
  }
  out.push(`\nMoved jobs (route or ending differs): ${c.moved.length}`);
  if (c.moved.length > 0)
    out.push(
      table(
        ['CASE', 'PIPELINE', 'A', 'B'],
        c.moved.map((m) => [
          m.case,
          m.pipeline,
          `${m.a.path.join('>')} → ${m.a.status}`,
          `${m.b.path.join('>')} → ${m.b.status}`,
        ]),
      ),
    );
  if (c.only_a.length || c.only_b.length)
    out.push(`Unmatched: ${c.only_a.length} only in A, ${c.only_b.length} only in B`);
  if (gates.length > 0) {
    out.push('\nGates:');
    for (const g of gates) out.push(`  ${g.ok ? 'pass' : 'FAIL'}  ${g.gate}: ${g.why}`);
  }
  return out.join('\n');
}
