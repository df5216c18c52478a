/**
 * `npm run bench:api [-- --seconds 3 --rounds 2 --connections 10]`: the "Handoff records API"
 * section of `npm run bench` alone. Markdown on stdout, JSON under results/.
 */
import path from 'node:path';
import { parseArgs } from 'node:util';
import { startLab } from '../lab';
import { runMain, writeResults } from '../report';
import { apiListMarkdown, apiListVsBareRoute } from './measure';

const { values: args } = parseArgs({
  options: {
    seconds: { type: 'string', default: '3' },
    rounds: { type: 'string', default: '2' },
    connections: { type: 'string', default: '10' },
  },
});

async function main(): Promise<boolean> {
  const lab = await startLab('bench-api');
  try {
    const figures = await apiListVsBareRoute(lab.tmp, lab.client, {
      seconds: Number(args.seconds),
      rounds: Number(args.rounds),
      connections: Number(args.connections),
    });
    console.log(`\n${apiListMarkdown(figures)}`);
    console.log(
      `\nJSON: ${path.relative(process.cwd(), writeResults('bench-api', { api_list_vs_bare_route: figures }))}`,
    );
    return figures.errors === 0;
  } finally {
    await lab.stop();
  }
}

runMain(main);
