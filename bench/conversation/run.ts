/**
 * `tsx bench/conversation/run.ts`: the "Conversation size vs history" section of `npm run bench`
 * alone, on a dev server of its own. Markdown on stdout, JSON under results/.
 */
import { handrailLogger } from '../../src/worker/logger';
import path from 'node:path';
import { Runtime } from '@temporalio/worker';
import { startLab } from '../lab';
import { runMain, writeResults } from '../report';
import { conversationMarkdown, conversationVsHistory } from './measure';

Runtime.install({ logger: handrailLogger() });

async function main(): Promise<void> {
  const lab = await startLab('bench-conversation');
  try {
    const figures = await conversationVsHistory(lab);
    console.log(`\n${conversationMarkdown(figures)}`);
    console.log(
      `\nJSON: ${path.relative(process.cwd(), writeResults('bench-conversation', { conversation: figures }))}`,
    );
  } finally {
    await lab.stop();
  }
}

runMain(main);
