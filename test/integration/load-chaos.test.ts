/**
 * Small-N versions of `npm run load`, `npm run chaos` and `npm run chaos -- --writes`: CI proves the properties on every
 * change; the figures stay in the benchmark (docs/benchmarks.md).
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { runChaos, type ChaosOptions } from '../../bench/chaos-run';
import { runLoadShape, type PropertyCheck } from '../../bench/load-shape';
import { startRail, uniqueId, type Rail } from '../helpers/rail';

/** A small chaos run on the suite's prebuilt bundle; `context` names its seed and timeline for a failure. */
async function smallChaos(opts: Pick<ChaosOptions, 'jobs' | 'kills' | 'writes'>) {
  const seed = Date.now() % 1_000_000;
  const report = await runChaos({
    ...opts,
    seed,
    windowMs: 4_000,
    settleMs: 80_000,
    bundlePath: inject('workflowBundlePath'),
  });
  return { report, context: ` (seed ${seed}; timeline: ${report.timeline.join(' | ')})` };
}

function expectAllHold(checks: readonly PropertyCheck[], context = ''): void {
  for (const c of checks) expect(c.ok, `${c.name}: ${c.detail}${context}`).toBe(true);
}

describe('the load shape (bench/load-shape.ts), small N, on the suite dev server', () => {
  let rail: Rail;
  beforeAll(async () => {
    rail = await startRail();
  });
  afterAll(async () => {
    await rail?.stop();
  });

  it('40 packages to writeback, 4 invalid, 2 delivered twice: invalid ones rejected_schema with no stage work, duplicates write once and ack duplicate, acks keep the trace', async () => {
    const report = await runLoadShape({
      client: rail.client,
      taskQueue: rail.taskQueue,
      store: rail.store,
      packages: 40,
      templates: 2,
      concurrency: 8,
      prefix: uniqueId('load'),
    });
    expect(report).toMatchObject({ packages: 40, invalid: 4, duplicated: 2, deliveries: 42 });
    expect(report.acks).toEqual({ accepted: 36, rejected_schema: 4, duplicate: 2 });
    expectAllHold(report.checks);
  });
});

describe('chaos, small N, on a dev server of its own (it restarts it)', () => {
  it(
    '4 jobs through a worker SIGKILL and a dev server restart all end, each completed job wrote once, nothing else wrote',
    { timeout: 110_000 },
    async () => {
      const { report, context } = await smallChaos({ jobs: 4, kills: 1 });
      expect(report).toMatchObject({ jobs: 4, kills: 1, server_restarts: 1, database_restarts: 0 });
      expect(Object.values(report.endings).reduce((a, b) => a + b, 0)).toBe(4);
      expectAllHold(report.checks, context);
    },
  );
});

describe('chaos for writes, small N, on a dev server of its own', () => {
  it(
    '6 jobs paying through the three reconcile modes, kills between send and record, network faults: no payment twice, no blind resend, every none write in doubt settled by a human',
    { timeout: 110_000 },
    async () => {
      // Kills land at the first commits and faults on the first write keys (`landing: 'first'`): a
      // loaded machine whose payments commit late still gets them (drawn, 1 run in 300 had none).
      const { report, context } = await smallChaos({ jobs: 6, kills: 3, writes: { faults: 6, landing: 'first' } });
      expect(report.writes?.rows.map((r) => [r.mode, r.jobs])).toEqual([
        ['idempotent', 2],
        ['lookup', 2],
        ['none', 2],
      ]);
      const faults = report.writes!.rows.flatMap((r) => Object.values(r.faults)).reduce((a, b) => a + b, 0);
      expect([report.kills > 0, faults > 0], JSON.stringify(report.writes?.rows)).toEqual([true, true]);
      expectAllHold(report.checks, context);
    },
  );
});
