/**
 * `npm run bench:tokens`: the "Model tokens per job" section of `npm run bench` alone, on a dev
 * server of its own. Markdown on stdout, JSON under results/.
 */
import path from 'node:path';
import { Runtime } from '@temporalio/worker';
import { handrailLogger } from '../../src/worker/logger';
import { startLab } from '../lab';
import { runMain, writeResults } from '../report';
import { tokensMarkdown, tokensPerJob } from './measure';

Runtime.install({ logger: handrailLogger() });

async function main(): Promise<void> {
  const lab = await startLab('bench-tokens');
  try {
    const figures = await tokensPerJob(lab);
    console.log(`\n${tokensMarkdown(figures)}`);
    console.log(`\nJSON: ${path.relative(process.cwd(), writeResults('bench-tokens', { tokens: figures }))}`);
  } finally {
    await lab.stop();
  }
}

runMain(main);
