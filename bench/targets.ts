/**
 * The performance targets for `npm run bench`, and whether a run met them. Pure: the bench hands in
 * its figures, this says what each target asks and if the run met it.
 */

/** The figures a target reads, as `npm run bench` measures them for one side. */
export interface TargetFigures {
  jobs_per_second: number;
  p50_latency_ms: number;
  p95_latency_ms: number;
  history_events_per_job: number;
  worker_cpu_ms_per_job: number;
  worker_peak_rss_mb: number;
  replay_histories_per_second: number;
}

export interface TargetInputs {
  handrail: TargetFigures;
  baseline: TargetFigures;
  /** Stage hops per handrail job (the events target allows one extra event per hop). */
  hops_per_job: number;
  /** validateHandoff / zod `safeParse`, one ratio per fixture set (bench/contracts.ts). */
  validation_vs_zod: readonly number[];
}

export interface TargetVerdict {
  figure: string;
  target: string;
  /** What this run measured, in the target's terms. */
  measured: number;
  met: boolean;
}

/** handrail / baseline against its bound. */
function judgeRatio(
  inputs: TargetInputs,
  figure: string,
  key: keyof TargetFigures,
  bound: 'at least' | 'at most',
  limit: number,
): TargetVerdict {
  const measured = inputs.handrail[key] / inputs.baseline[key];
  return {
    figure: `${figure} (handrail / baseline)`,
    target: `${bound === 'at least' ? '≥' : '≤'} ${limit}×`,
    measured,
    met: bound === 'at least' ? measured >= limit : measured <= limit,
  };
}

/** Validations per second of the rail's full check against zod's, on every fixture set. */
export const VALIDATION_TARGET = 5;

/** Every target of `npm run bench`, in the order; `npm run load` and
 * `npm run bench:scaling` judge their own (deliveries/s, package bytes). */
export function judgeTargets(inputs: TargetInputs): TargetVerdict[] {
  const allowed = inputs.baseline.history_events_per_job + inputs.hops_per_job;
  const slowest = inputs.validation_vs_zod.length > 0 ? Math.min(...inputs.validation_vs_zod) : NaN;
  return [
    judgeRatio(inputs, 'jobs / s', 'jobs_per_second', 'at least', 0.95),
    judgeRatio(inputs, 'p50 job latency', 'p50_latency_ms', 'at most', 1.1),
    judgeRatio(inputs, 'p95 job latency', 'p95_latency_ms', 'at most', 1.1),
    {
      figure: 'history events / job (handrail)',
      target: `≤ baseline + 1 per hop (${Number(allowed.toPrecision(4))})`,
      measured: inputs.handrail.history_events_per_job,
      met: inputs.handrail.history_events_per_job <= allowed,
    },
    judgeRatio(inputs, 'worker CPU / job', 'worker_cpu_ms_per_job', 'at most', 1.2),
    judgeRatio(inputs, 'worker peak RSS', 'worker_peak_rss_mb', 'at most', 1.15),
    judgeRatio(inputs, 'replay speed', 'replay_histories_per_second', 'at least', 0.8),
    {
      figure: 'validateHandoff / zod (slowest fixture set)',
      target: `≥ ${VALIDATION_TARGET}×`,
      measured: slowest,
      met: slowest >= VALIDATION_TARGET,
    },
  ];
}
