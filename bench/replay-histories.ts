/**
 * Replay speed over the recorded histories (test/histories), on one replay worker with the
 * production runtime, after an untimed warm-up replay; for profiling replay
 * (`node --cpu-prof --import tsx bench/replay-histories.ts --bundle file.js`, docs/benchmarks.md
 * "Profile"). Fails when a history does not replay.
 *
 * `npx tsx bench/replay-histories.ts [--repeat 3] [--bundle file.js]`; without `--bundle`, it
 * bundles workflows/index.ts first.
 */
import fs from 'node:fs';
import { parseArgs } from 'node:util';
import type { WorkflowBundle } from '@temporalio/worker';
import { listHistoryFiles } from '../scripts/replay/histories';
import { BUILT_IN_WORKFLOWS } from '../src/pipelines';
import {
  bundleWorkflows,
  describeReplayFailure,
  historyFileSource,
  quietReplayRuntime,
  replayHistories,
} from '../src/replay';
import { runMain } from './report';

const { values: args } = parseArgs({
  options: { repeat: { type: 'string', default: '3' }, bundle: { type: 'string' } },
});

async function main(): Promise<boolean> {
  // As `handrail replay` runs on plain Node: without the source maps tsx turns on.
  process.setSourceMapsEnabled(false);
  quietReplayRuntime();
  const workflowBundle: WorkflowBundle = args.bundle
    ? { code: fs.readFileSync(args.bundle, 'utf8') }
    : await bundleWorkflows(BUILT_IN_WORKFLOWS.workflowsPath, BUILT_IN_WORKFLOWS.preloadModules);
  const sources = listHistoryFiles().map(historyFileSource);
  const replay = async (batch: typeof sources) => {
    const failures: string[] = [];
    for await (const outcome of replayHistories(batch, { workflowBundle })) {
      const failure = describeReplayFailure(outcome);
      if (failure) failures.push(failure);
    }
    return failures;
  };
  await replay(sources.slice(0, 1));
  const batch = Array.from({ length: Number(args.repeat) }, () => sources).flat();
  const t0 = process.hrtime.bigint();
  const failures = await replay(batch);
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  console.log(
    `${batch.length} histories (${sources.length} × ${args.repeat}) replayed in ${seconds.toFixed(2)} s: ${(batch.length / seconds).toFixed(1)} histories / s`,
  );
  for (const failure of failures) console.error(failure);
  return failures.length === 0;
}

runMain(main);
