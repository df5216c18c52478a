/**
 * A dev-time server the demo leaves running (the records API, the codec server): a
 * detached `node --import tsx` process with its pid in a file for `npm run server:stop`.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { codeRoot } from '../config';

export interface DetachedServer {
  /** What to call it in an error, e.g. "the codec server". */
  what: string;
  url: string;
  /** The TypeScript entry point. */
  script: string;
  env: NodeJS.ProcessEnv;
  pidFile: string;
  logFile: string;
  /** Whether it answers at `url` yet. */
  answers: () => Promise<boolean>;
}

/** Starts it and waits until it answers (30 s), or throws pointing at its log. */
export async function startDetached(server: DetachedServer): Promise<void> {
  fs.mkdirSync(path.dirname(server.logFile), { recursive: true });
  const log = fs.openSync(server.logFile, 'a');
  // From the sources (a checkout) tsx runs the TypeScript; the built package runs its JavaScript.
  const args = server.script.endsWith('.ts') ? ['--import', 'tsx', server.script] : [server.script];
  const child = spawn(process.execPath, args, {
    detached: true,
    cwd: server.script.endsWith('.ts') ? codeRoot : process.cwd(),
    stdio: ['ignore', log, log],
    env: server.env,
  });
  fs.closeSync(log);
  child.unref();
  if (child.pid) fs.writeFileSync(server.pidFile, String(child.pid));
  for (const deadline = Date.now() + 30_000; Date.now() < deadline;) {
    if (await server.answers()) return;
    if (child.exitCode !== null) break;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`${server.what} did not come up at ${server.url}; see ${server.logFile}`);
}
