/**
 * Recorded histories: where they live, how a file is read, and replaying them against a workflow
 * bundle. The recorder writes them; the replay suite and the results test read them.
 */
import fs from 'node:fs';
import path from 'node:path';
import { historyFromJSON, type History } from '@temporalio/common/lib/proto-utils';
import { Worker, type WorkflowBundle } from '@temporalio/worker';
import { PROJECT_ROOT } from '../../src/config';
import { WORKFLOW_RUNTIME } from '../../src/worker/worker';

export const HISTORIES_DIR = path.join(PROJECT_ROOT, 'test', 'histories');
/** Normalized expected results, one per scenario: replay compares commands, never results. */
export const RESULTS_DIR = path.join(HISTORIES_DIR, 'results');

export const historyFile = (scenario: string): string => path.join(HISTORIES_DIR, `${scenario}.json`);
export const resultFile = (scenario: string): string => path.join(RESULTS_DIR, `${scenario}.json`);

/** Every history to replay: each `*.json` directly in test/histories, sorted. */
export function listHistoryFiles(dir = HISTORIES_DIR): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.json'))
    .map((e) => path.join(dir, e.name))
    .sort();
}

/**
 * Reads a history exported as JSON `{ "events": [...] }`: by the recorder (`historyToJSON`), by
 * `temporal workflow show --output json`, or by the Web UI's download. Enum values may be spelled
 * `EVENT_TYPE_WORKFLOW_EXECUTION_STARTED` (recorder, CLI) or `WorkflowExecutionStarted`.
 */
export function readHistoryFile(file: string): History {
  try {
    return historyFromJSON(JSON.parse(fs.readFileSync(file, 'utf8')));
  } catch (err) {
    throw new Error(`${path.basename(file)} is not a readable history: ${(err as Error).message}`);
  }
}

export interface ReplayOutcome {
  file: string;
  workflowId: string;
  /** `DeterminismViolationError` or `ReplayError` when the bundle no longer replays the history. */
  error?: Error;
}

/** "happy-path.json: DeterminismViolationError: …": which history failed and why. */
export function describeFailure(outcome: ReplayOutcome): string | undefined {
  return outcome.error && `${path.basename(outcome.file)}: ${outcome.error.name}: ${outcome.error.message}`;
}

/**
 * Replays each file with one replay worker, in order. The workflow id is the one the history was
 * recorded under (the started event carries it; older servers omit it, and the file name stands
 * in), so the workflow sees what it saw when it ran.
 * It runs with production's data converter and workflow interceptors (WORKFLOW_RUNTIME).
 */
export async function replayHistoryFiles(files: readonly string[], workflowBundle: WorkflowBundle): Promise<ReplayOutcome[]> {
  const histories = files.map((file) => {
    const history = readHistoryFile(file);
    const workflowId = history.events?.[0]?.workflowExecutionStartedEventAttributes?.workflowId || path.basename(file, '.json');
    return { file, workflowId, history };
  });
  const outcomes: ReplayOutcome[] = [];
  // runReplayHistories replays one history at a time and yields in input order.
  for await (const result of Worker.runReplayHistories({ ...WORKFLOW_RUNTIME, workflowBundle, replayName: 'handrail-replay' }, histories)) {
    const { file, workflowId } = histories[outcomes.length]!;
    outcomes.push({ file, workflowId, ...(result.error ? { error: result.error } : {}) });
  }
  return outcomes;
}
