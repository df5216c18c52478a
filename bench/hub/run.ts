/**
 * `tsx bench/hub/run.ts [--jobs 5]`: the "Hub vs serial relay" section of `npm run bench` alone,
 * on a dev server of its own. Markdown on stdout, JSON under results/.
 */
import { handrailLogger } from '../../src/worker/logger';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Runtime } from '@temporalio/worker';
import { startLab } from '../lab';
import { runMain, writeResults } from '../report';
import { hubMarkdown, hubVsRelay } from './measure';

Runtime.install({ logger: handrailLogger() });

const { values: args } = parseArgs({ options: { jobs: { type: 'string', default: '5' } } });

async function main(): Promise<void> {
  const lab = await startLab('bench-hub');
  try {
    const figures = await hubVsRelay(lab, Number(args.jobs));
    console.log(`\n${hubMarkdown(figures)}`);
    console.log(`\nJSON: ${path.relative(process.cwd(), writeResults('bench-hub', { hub_vs_relay: figures }))}`);
  } finally {
    await lab.stop();
  }
}

runMain(main);
