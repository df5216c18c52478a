/** `handrail` as an operator runs it, in a child process: the CLI from its sources (the built bin is
 * the consumer test's, test/integration/consumer.test.ts). */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { codeRoot } from '../../src/config';

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
  ms: number;
}

/** Runs the CLI with `env` over this process's; async so a worker in this process keeps serving jobs. */
export function runHandrail(args: string[], env: NodeJS.ProcessEnv, timeoutMs = 90_000): Promise<CliRun> {
  const started = Date.now();
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', path.join(codeRoot, 'src', 'operator', 'cli.ts'), ...args],
      { cwd: codeRoot, env: { ...process.env, ...env }, timeout: timeoutMs },
      (err, stdout, stderr) =>
        resolve({
          code: err ? (typeof err.code === 'number' ? err.code : 1) : 0,
          stdout,
          stderr,
          ms: Date.now() - started,
        }),
    );
  });
}
