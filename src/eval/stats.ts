/** Where a scorer's values lie over a run: pure. */
import type { ScoreStats } from './types';

/** The nearest-rank percentile of sorted values (p in 0..100). */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

/** Rounded to 9 significant digits: a mean of 0.1s reads 0.1, not 0.10000000000000002. */
/** A figure without float noise (0.1 + 0.2 → 0.3), as every report and gate shows it. */
export const tidy = (n: number) => Number(n.toPrecision(9));

export function scoreStats(values: readonly number[]): ScoreStats | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  return {
    n: sorted.length,
    mean: tidy(sorted.reduce((sum, v) => sum + v, 0) / sorted.length),
    p50: percentile(sorted, 50),
    p95: percentile(sorted, 95),
    min: sorted[0]!,
    max: sorted.at(-1)!,
  };
}

/** Each scorer's stats over the jobs that have a value for it. */
export function summarize(
  jobs: readonly { scores: Record<string, number> }[],
  scorers: readonly { name: string }[],
): Record<string, ScoreStats> {
  const summary: Record<string, ScoreStats> = {};
  for (const { name } of scorers) {
    const stats = scoreStats(jobs.flatMap((j) => (name in j.scores ? [j.scores[name]!] : [])));
    if (stats) summary[name] = stats;
  }
  return summary;
}
