/**
 * Proof that the replay suite catches breakage: a workflow variant that adds a timer before its
 * first command fails on every recorded history, and the same change behind `patched()` passes.
 */
import path from 'node:path';
import { bundleWorkflowCode, type WorkflowBundle } from '@temporalio/worker';
import { beforeAll, describe, expect, it } from 'vitest';
import { describeFailure, listHistoryFiles, replayHistoryFiles } from '../../scripts/replay/histories';
import { replayLogger } from './quiet-runtime';

const files = listHistoryFiles();
const variant = (name: string) => bundleWorkflowCode({ workflowsPath: path.join(__dirname, 'variants', `${name}.ts`), logger: replayLogger });
let timerFirst: WorkflowBundle;
let patchedTimerFirst: WorkflowBundle;

beforeAll(async () => {
  timerFirst = await variant('timer-first');
  patchedTimerFirst = await variant('patched-timer-first');
});

describe('replay catches a non-deterministic workflow change', () => {
  it('a timer added before the first command fails every recorded history with DeterminismViolationError, naming it', async () => {
    const outcomes = await replayHistoryFiles(files, timerFirst);
    expect(outcomes).toHaveLength(files.length);
    for (const outcome of outcomes) {
      expect(outcome.error?.name, path.basename(outcome.file)).toBe('DeterminismViolationError');
      expect(describeFailure(outcome)).toMatch(new RegExp(`^${path.basename(outcome.file).replace(/\./g, '\\.')}: DeterminismViolationError: `));
    }
  });

  it('the same timer behind patched() replays every recorded history', async () => {
    const failures = (await replayHistoryFiles(files, patchedTimerFirst)).map(describeFailure).filter(Boolean);
    expect(failures).toEqual([]);
  });
});
