import { describe, expect, it } from 'vitest';
import { judgeTargets, type TargetFigures, type TargetInputs } from '../../../bench/targets';

const baseline: TargetFigures = {
  jobs_per_second: 10,
  p50_latency_ms: 1000,
  p95_latency_ms: 1200,
  history_events_per_job: 35,
  worker_cpu_ms_per_job: 50,
  worker_peak_rss_mb: 300,
  replay_histories_per_second: 70,
};

/** handrail's figures on the edge of every target: each one just met. */
const onTheEdge: TargetFigures = {
  jobs_per_second: 9.5,
  p50_latency_ms: 1100,
  p95_latency_ms: 1320,
  history_events_per_job: 40,
  worker_cpu_ms_per_job: 60,
  worker_peak_rss_mb: 345,
  replay_histories_per_second: 56,
};

const inputs = (handrail: Partial<TargetFigures>, validation = [5, 6]): TargetInputs => ({
  handrail: { ...onTheEdge, ...handrail },
  baseline,
  hops_per_job: 5,
  validation_vs_zod: validation,
});

describe('benchmark targets', () => {
  it("lists every target of npm run bench in the issue's order, each met on its edge", () => {
    const verdicts = judgeTargets(inputs({}));
    expect(verdicts.map((v) => v.figure.split(' (')[0])).toEqual([
      'jobs / s',
      'p50 job latency',
      'p95 job latency',
      'history events / job',
      'worker CPU / job',
      'worker peak RSS',
      'replay speed',
      'validateHandoff / zod',
    ]);
    expect(verdicts.filter((v) => !v.met)).toEqual([]);
  });

  it.each([
    ['jobs / s', { jobs_per_second: 9.4 }],
    ['p50 job latency', { p50_latency_ms: 1101 }],
    ['p95 job latency', { p95_latency_ms: 1321 }],
    ['history events / job', { history_events_per_job: 41 }],
    ['worker CPU / job', { worker_cpu_ms_per_job: 60.1 }],
    ['worker peak RSS', { worker_peak_rss_mb: 346 }],
    ['replay speed', { replay_histories_per_second: 55.9 }],
  ] as const)('%s past its bound is the one target not met', (figure, past) => {
    const missed = judgeTargets(inputs(past)).filter((v) => !v.met);
    expect(missed.map((v) => v.figure.split(' (')[0])).toEqual([figure]);
  });

  it('validation is judged on its slowest fixture set, and with none measured it is not met', () => {
    const slow = judgeTargets(inputs({}, [6.1, 4.9, 7])).find((v) => v.figure.startsWith('validateHandoff'))!;
    expect(slow).toMatchObject({ measured: 4.9, met: false });
    expect(judgeTargets(inputs({}, [])).find((v) => v.figure.startsWith('validateHandoff'))!.met).toBe(false);
  });

  it('the events target allows one extra event per hop over the baseline', () => {
    const events = judgeTargets({ ...inputs({ history_events_per_job: 43 }), hops_per_job: 8 }).find((v) =>
      v.figure.startsWith('history events'),
    )!;
    expect(events).toMatchObject({ target: '≤ baseline + 1 per hop (43)', measured: 43, met: true });
  });
});
