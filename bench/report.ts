/**
 * Output shared by the bench commands: markdown tables on stdout (or, with `--json`, the JSON
 * report itself), and the JSON under results/ either way.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { codeRoot } from '../src/config';
import type { PropertyCheck } from './load-shape';
import { percentile as percentileOfSorted } from '../src/eval/stats';

export const RESULTS_DIR = path.join(codeRoot, 'results');

export function markdownTable(header: readonly string[], rows: readonly (readonly (string | number)[])[]): string {
  const line = (cells: readonly (string | number)[]) => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}

export function checksTable(checks: readonly PropertyCheck[]): string {
  return markdownTable(
    ['check', 'result', 'detail'],
    checks.map((c) => [c.name, c.ok ? 'PASS' : 'FAIL', c.detail]),
  );
}

/** Nearest-rank percentile of a non-empty sample, in any order. */
export function percentile(values: readonly number[], p: number): number {
  return percentileOfSorted(
    [...values].sort((a, b) => a - b),
    p,
  );
}

/** Rounds for display: three significant digits is all a noisy 2-core box can back. */
export function fmt(n: number): string {
  return Number.isFinite(n) ? Number(n.toPrecision(3)).toLocaleString('en-US') : String(n);
}

/** Where and on what the figures were taken; they mean little without it. */
export function machine() {
  return {
    node: process.version,
    platform: `${os.platform()} ${os.arch()}`,
    cpus: os.cpus().length,
    cpu_model: os.cpus()[0]?.model ?? 'unknown',
    loadavg_1m: os.loadavg()[0],
  };
}

/** Writes `results/<name>-<timestamp>.json` and returns its path. */
export function writeResults(name: string, body: object): string {
  fs.mkdirSync(RESULTS_DIR, { recursive: true });
  const file = path.join(RESULTS_DIR, `${name}-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  fs.writeFileSync(
    file,
    `${JSON.stringify({ taken_at: new Date().toISOString(), machine: machine(), ...body }, null, 2)}\n`,
  );
  return file;
}

/**
 * A bench's report: written to results/, then printed as `markdown` with the file's path, or with
 * `json` as the JSON written (for scripts and CI: stdout is then nothing but that JSON).
 */
export function printReport(name: string, body: object, json: boolean, markdown: () => string): void {
  const file = writeResults(name, body);
  if (json) console.log(fs.readFileSync(file, 'utf8').trimEnd());
  else console.log(`${markdown()}\n\nJSON: ${path.relative(process.cwd(), file)}`);
}

/** Runs a bench script's main and exits: 0 when it returns true or nothing, 1 when false or it throws. */
export function runMain(main: () => Promise<boolean | void>): void {
  main().then(
    (ok) => process.exit(ok === false ? 1 : 0),
    (err: Error) => {
      console.error(err.stack ?? err.message);
      process.exit(1);
    },
  );
}
