/**
 * `handrail eval compare A B`: two runs' scores side by side, pure. Jobs are matched by their
 * case (a dataset entry and its repeat, or a recorded job's id); a matched job whose stages or
 * ending differ between the two builds has moved.
 */
import { scoreStats, tidy } from './stats';
import type { EvalRun, ScoreStats, ScoredJob, Scorer } from './types';

export interface JobChange {
  case: string;
  pipeline: string;
  a: number;
  b: number;
  delta: number;
}

export interface ScorerComparison {
  name: string;
  unit: Scorer['unit'];
  a?: ScoreStats;
  b?: ScoreStats;
  /** B's mean minus A's, over the matched jobs. */
  delta?: number;
  /** The change relative to A's mean, in percent (undefined when A's mean is 0). */
  delta_pct?: number;
  /** The jobs whose value changed most, largest change first. */
  changed: JobChange[];
}

/** A job whose route or ending differs between the builds. */
export interface MovedJob {
  case: string;
  pipeline: string;
  a: { status: string; path: string[] };
  b: { status: string; path: string[] };
}

export interface Comparison {
  a: { build: EvalRun['build']; jobs: number };
  b: { build: EvalRun['build']; jobs: number };
  matched: number;
  only_a: string[];
  only_b: string[];
  scorers: ScorerComparison[];
  moved: MovedJob[];
  /** Per matched job, both runs' scores (the report's plots). */
  pairs: { case: string; pipeline: string; a: ScoredJob; b: ScoredJob }[];
}

/** How many changed jobs each scorer lists. */
export const CHANGED_SHOWN = 5;

const byCase = (run: EvalRun) => new Map(run.jobs.map((j) => [j.case, j]));
const samePath = (a: ScoredJob, b: ScoredJob) => a.status === b.status && a.path.join('>') === b.path.join('>');

function compareScorer(name: string, unit: Scorer['unit'], pairs: Comparison['pairs']): ScorerComparison {
  // Over the matched jobs only: a job one run has and the other lacks would move the means alone.
  const values = (side: 'a' | 'b') => pairs.flatMap((p) => (name in p[side].scores ? [p[side].scores[name]!] : []));
  const [sa, sb] = [scoreStats(values('a')), scoreStats(values('b'))];
  const delta = sa && sb ? tidy(sb.mean - sa.mean) : undefined;
  const changed = pairs
    .flatMap(({ case: c, pipeline, a: ja, b: jb }) => {
      const [va, vb] = [ja.scores[name], jb.scores[name]];
      return va !== undefined && vb !== undefined && va !== vb
        ? [{ case: c, pipeline, a: va, b: vb, delta: tidy(vb - va) }]
        : [];
    })
    .sort((x, y) => Math.abs(y.delta) - Math.abs(x.delta) || x.case.localeCompare(y.case))
    .slice(0, CHANGED_SHOWN);
  return {
    name,
    unit,
    ...(sa ? { a: sa } : {}),
    ...(sb ? { b: sb } : {}),
    ...(delta === undefined ? {} : { delta }),
    ...(delta !== undefined && sa && sa.mean !== 0 ? { delta_pct: Number(((delta / sa.mean) * 100).toFixed(3)) } : {}),
    changed,
  };
}

export function compareRuns(a: EvalRun, b: EvalRun): Comparison {
  const [ja, jb] = [byCase(a), byCase(b)];
  const pairs = [...ja.values()].flatMap((x) => {
    const y = jb.get(x.case);
    return y ? [{ case: x.case, pipeline: x.pipeline, a: x, b: y }] : [];
  });
  const units = new Map([...a.scorers, ...b.scorers].map((s) => [s.name, s.unit]));
  return {
    a: { build: a.build, jobs: a.jobs.length },
    b: { build: b.build, jobs: b.jobs.length },
    matched: pairs.length,
    only_a: [...ja.keys()].filter((c) => !jb.has(c)),
    only_b: [...jb.keys()].filter((c) => !ja.has(c)),
    scorers: [...units].map(([name, unit]) => compareScorer(name, unit, pairs)),
    moved: pairs
      .filter((p) => !samePath(p.a, p.b))
      .map((p) => ({
        case: p.case,
        pipeline: p.pipeline,
        a: { status: p.a.status, path: p.a.path },
        b: { status: p.b.status, path: p.b.path },
      })),
    pairs,
  };
}
