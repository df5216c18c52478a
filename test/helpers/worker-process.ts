/**
 * Worker processes a test SIGKILLs: forked through tsx with an IPC channel, on the suite's
 * Temporal dev server, ready once they say so (their side: worker-child.ts).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { inject } from 'vitest';

/** Resolves when the child sends `what`. */
export const said = (child: ChildProcess, what: string) =>
  new Promise<void>((resolve) => child.on('message', (m) => m === what && resolve()));

/** Forks `file` with `env` (beside the dev server's address and namespace, and no DATABASE_URL);
 * resolves once it says `ready`, rejects if it exits first. */
export async function forkWorker(file: string, env: Record<string, string>, name: string): Promise<ChildProcess> {
  const child = fork(file, [], {
    execArgv: ['--import', 'tsx'],
    env: {
      ...process.env,
      TEMPORAL_ADDRESS: inject('temporalAddress'),
      TEMPORAL_NAMESPACE: inject('namespace'),
      DATABASE_URL: '',
      ...env,
    },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const exited = new Promise<never>((_, reject) =>
    child.once('exit', (code, signal) => reject(new Error(`${name} exited (${signal ?? code})`))),
  );
  await Promise.race([said(child, 'ready'), exited]);
  return child;
}

/** Kills the child at once (no drain, no goodbye), resolving once it is gone. */
export const sigkill = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
