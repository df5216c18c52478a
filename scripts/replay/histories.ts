/**
 * Recorded histories: where they live. The recorder writes them; the replay suite and the results
 * test read them, and replay them with src/replay.
 */
import fs from 'node:fs';
import path from 'node:path';
import { codeRoot } from '../../src/config';

export const HISTORIES_DIR = path.join(codeRoot, 'test', 'histories');
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
