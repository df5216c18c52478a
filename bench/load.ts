/**
 * `npm run load [-- --packages 1000 --concurrency 16 --templates 10 --json]`: seed 001's load shape on a
 * dev server of its own (see bench/load-shape.ts). Exits non-zero when a property fails.
 */
import path from 'node:path';
import { parseArgs } from 'node:util';
import { isTty, liveLine } from '../src/operator/cli/terminal';
import { openStore } from '../src/worker/store';
import { HANDRAIL_WORKFLOWS, runId, startLab, writeBundle } from './lab';
import { runLoadShape } from './load-shape';
import { checksTable, fmt, markdownTable, printReport, runMain } from './report';
import { startWorkerProcess } from './workers';

const { values: args } = parseArgs({
  options: {
    packages: { type: 'string', default: '1000' },
    concurrency: { type: 'string', default: '16' },
    templates: { type: 'string', default: '10' },
    json: { type: 'boolean' },
  },
});

// Progress on stderr, and only on a terminal: stdout is the report.
const live = liveLine(process.stderr, isTty(process.stderr));

async function main(): Promise<boolean> {
  const lab = await startLab('load');
  try {
    const taskQueue = `load-${runId()}`;
    const dataDir = path.join(lab.tmp, 'store');
    const worker = await startWorkerProcess({ kind: 'handrail', address: lab.address, taskQueue, dataDir, bundlePath: await writeBundle(HANDRAIL_WORKFLOWS, path.join(lab.tmp, 'handrail-workflows.js')) });
    const store = await openStore({ dataDir });
    try {
      const report = await runLoadShape({
        client: lab.client,
        taskQueue,
        store,
        packages: Number(args.packages),
        templates: Number(args.templates),
        concurrency: Number(args.concurrency),
        prefix: taskQueue,
        onProgress: live.show,
      });
      live.clear();
      printReport('load', { concurrency: Number(args.concurrency), templates: Number(args.templates), ...report }, Boolean(args.json), () =>
        [
          `\n## Load: ${report.packages} packages through stageHop → ${report.stage} (${report.invalid} invalid, ${report.duplicated} delivered twice)\n`,
          markdownTable(
            ['deliveries', 'seconds', 'deliveries/s', ...Object.keys(report.acks).map((a) => `acks ${a}`)],
            [[report.deliveries, fmt(report.seconds), fmt(report.deliveries_per_second), ...Object.values(report.acks)]],
          ),
          `\n${checksTable(report.checks)}`,
        ].join('\n'),
      );
      return report.checks.every((c) => c.ok);
    } finally {
      await store.close();
      await worker.stop();
    }
  } finally {
    await lab.stop();
  }
}

runMain(main);
