/**
 * `npm run load [-- --packages 1000 --concurrency 16 --templates 10 --rounds 2 --json]`: the load shape on a
 * dev server of its own (see bench/load-shape.ts), then the same deliveries through a bare
 * one-activity workflow on a worker of its own (bench/load-baseline.ts), and the ratio of the two.
 * Exits non-zero when a property fails.
 */
import path from 'node:path';
import { parseArgs } from 'node:util';
import { isTty, liveLine } from '../src/operator/cli/terminal';
import { openStore } from '../src/worker/store';
import type { Client } from '@temporalio/client';
import { activitiesScheduled, fetchHistories, meanEvents } from './history';
import { BASELINE_WORKFLOWS, HANDRAIL_WORKFLOWS, runId, startLab, writeBundle } from './lab';
import { prepareBaselineLoad } from './load-baseline';
import { prepareLoadShape, RELAY } from './load-shape';
import { checksTable, fmt, markdownTable, printReport, runMain } from './report';
import { startWorkerProcess } from './workers';

const { values: args } = parseArgs({
  options: {
    packages: { type: 'string', default: '1000' },
    concurrency: { type: 'string', default: '16' },
    templates: { type: 'string', default: '10' },
    rounds: { type: 'string', default: '2' },
    json: { type: 'boolean' },
  },
});

// Progress on stderr, and only on a terminal: stdout is the report.
const live = liveLine(process.stderr, isTty(process.stderr));

async function main(): Promise<boolean> {
  const lab = await startLab('load');
  try {
    const id = runId();
    const taskQueue = `load-${id}`;
    const baselineQueue = `load-baseline-${id}`;
    const dataDir = path.join(lab.tmp, 'store');
    const worker = await startWorkerProcess({
      kind: 'handrail',
      address: lab.address,
      taskQueue,
      dataDir,
      bundlePath: await writeBundle(HANDRAIL_WORKFLOWS, path.join(lab.tmp, 'handrail-workflows.js')),
    });
    const baselineWorker = await startWorkerProcess({
      kind: 'baseline',
      address: lab.address,
      taskQueue: baselineQueue,
      dataDir: path.join(lab.tmp, 'baseline-store'),
      bundlePath: await writeBundle(BASELINE_WORKFLOWS, path.join(lab.tmp, 'baseline-workflows.js')),
    });
    const store = await openStore({ dataDir });
    try {
      const shape = {
        packages: Number(args.packages),
        templates: Number(args.templates),
        concurrency: Number(args.concurrency),
        onProgress: live.show,
      };
      const rounds = Number(args.rounds);
      // Worker CPU is read around the whole run (relays and the other side's rounds included: an
      // idle worker only polls) and split per delivery only roughly; the timed figure is
      // deliveries per second.
      const cpuBefore = (await worker.usage()).cpuMicros;
      const baseCpuBefore = (await baselineWorker.usage()).cpuMicros;
      const handrail = await prepareLoadShape({ ...shape, client: lab.client, taskQueue, store, prefix: taskQueue });
      const bare = await prepareBaselineLoad({
        ...shape,
        client: lab.client,
        taskQueue: baselineQueue,
        prefix: baselineQueue,
      });
      // The dev server keeps every history in memory and slows as they pile up, so whichever side
      // went second would pay for the first's: the rounds alternate which side goes first.
      for (let round = 0; round < rounds; round++) {
        for (const side of round % 2 === 0 ? [handrail, bare] : [bare, handrail])
          await side.deliverRound(round, rounds);
      }
      const report = await handrail.finish();
      const baseline = await bare.finish();
      const cpuHandrail = (await worker.usage()).cpuMicros - cpuBefore;
      const cpuBaseline = (await baselineWorker.usage()).cpuMicros - baseCpuBefore;
      live.clear();
      const perDelivery = {
        handrail: await deliveryCost(
          lab.client,
          report.accepted_workflow_ids,
          cpuHandrail,
          report.deliveries + report.packages * RELAY.length,
        ),
        baseline: await deliveryCost(
          lab.client,
          baseline.workflow_ids,
          cpuBaseline,
          baseline.deliveries + baseline.packages * RELAY.length,
        ),
      };
      const ratio = report.deliveries_per_second / baseline.deliveries_per_second;
      const { accepted_workflow_ids: _ids, ...handrailFigures } = report;
      const { workflow_ids: _baseIds, ...baselineFigures } = baseline;
      const body = {
        concurrency: shape.concurrency,
        templates: shape.templates,
        rounds,
        ...handrailFigures,
        baseline: baselineFigures,
        deliveries_per_second_vs_baseline: ratio,
        target_vs_baseline: TARGET_RATIO,
        per_delivery: perDelivery,
      };
      printReport('load', body, Boolean(args.json), () =>
        [
          `\n## Load: ${report.packages} packages through stageHop → ${report.stage} (${report.invalid} invalid, ${report.duplicated} delivered twice)\n`,
          markdownTable(
            ['deliveries', 'seconds', 'deliveries/s', ...Object.keys(report.acks).map((a) => `acks ${a}`)],
            [
              [
                report.deliveries,
                fmt(report.seconds),
                fmt(report.deliveries_per_second),
                ...Object.values(report.acks),
              ],
            ],
          ),
          `\n### Against a bare one-activity workflow (baselineHop → writeback), same concurrency (${shape.concurrency}), ${rounds} rounds alternating which side goes first\n`,
          markdownTable(
            [
              'side',
              'deliveries',
              'seconds',
              'deliveries/s',
              'history events / writeback delivery',
              'activities / delivery',
              'worker CPU ms / workflow (relays included)',
            ],
            [
              [
                'stageHop',
                report.deliveries,
                fmt(report.seconds),
                fmt(report.deliveries_per_second),
                fmt(perDelivery.handrail.history_events),
                fmt(perDelivery.handrail.activities),
                fmt(perDelivery.handrail.worker_cpu_ms_per_workflow),
              ],
              [
                'baselineHop',
                baseline.deliveries,
                fmt(baseline.seconds),
                fmt(baseline.deliveries_per_second),
                fmt(perDelivery.baseline.history_events),
                fmt(perDelivery.baseline.activities),
                fmt(perDelivery.baseline.worker_cpu_ms_per_workflow),
              ],
            ],
          ),
          `\nstageHop / baseline deliveries/s: **${fmt(ratio)}×** (target ≥ ${TARGET_RATIO}×: ${ratio >= TARGET_RATIO ? 'met' : 'not met'})`,
          `\n${checksTable(report.checks)}`,
        ].join('\n'),
      );
      return report.checks.every((c) => c.ok);
    } finally {
      await store.close();
      await Promise.all([worker.stop(), baselineWorker.stop()]);
    }
  } finally {
    await lab.stop();
  }
}

const TARGET_RATIO = 0.9;
const HISTORY_SAMPLE = 20;

/** What one side's workflows cost: history events and activities of a sample of its valid
 * writeback deliveries, and the worker's CPU over all the workflows it ran. */
async function deliveryCost(client: Client, workflowIds: string[], cpuMicros: number, workflows: number) {
  const histories = await fetchHistories(client, workflowIds.slice(0, HISTORY_SAMPLE));
  return {
    history_events: meanEvents(histories),
    activities: histories.reduce((n, h) => n + activitiesScheduled(h).length, 0) / Math.max(1, histories.length),
    worker_cpu_ms_per_workflow: cpuMicros / 1000 / workflows,
  };
}

runMain(main);
