/**
 * Proof that the replay suite catches breakage: a workflow variant that adds a timer before its
 * first command fails on every recorded history, and the same change behind `patched()` passes.
 */
import path from 'node:path';
import type { WorkflowBundle } from '@temporalio/worker';
import { beforeAll, describe, expect, it } from 'vitest';
import { listHistoryFiles } from '../../scripts/replay/histories';
import { bundleWorkflows, describeReplayFailure, quietReplayRuntime, replayHistoryFiles } from '../../src/replay';

quietReplayRuntime();

const files = listHistoryFiles();
const variant = (name: string) => bundleWorkflows(path.join(__dirname, 'variants', `${name}.ts`));
let timerFirst: WorkflowBundle;
let patchedTimerFirst: WorkflowBundle;

beforeAll(async () => {
  timerFirst = await variant('timer-first');
  patchedTimerFirst = await variant('patched-timer-first');
});

describe('replay catches a non-deterministic workflow change', () => {
  it('a timer added before the first command fails every recorded history with DeterminismViolationError, naming it', async () => {
    const outcomes = await replayHistoryFiles(files, { workflowBundle: timerFirst });
    expect(outcomes).toHaveLength(files.length);
    for (const outcome of outcomes) {
      expect(outcome.ok ? 'passed' : outcome.error, path.basename(outcome.history)).toBe('DeterminismViolationError');
      expect(describeReplayFailure(outcome)).toMatch(
        new RegExp(`^${path.basename(outcome.history).replace(/\./g, '\\.')}: DeterminismViolationError: `),
      );
    }
  });

  it('the same timer behind patched() replays every recorded history', async () => {
    const failures = (await replayHistoryFiles(files, { workflowBundle: patchedTimerFirst }))
      .map(describeReplayFailure)
      .filter(Boolean);
    expect(failures).toEqual([]);
  });
});
