/**
 * The cluster's background processes (server, Web UI, workers): started detached in a process
 * group of their own, pid and log in files, stopped by group. A pid file also records the
 * executable, so a stale file whose pid now belongs to someone else's process is ignored, not signalled.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { DaemonFiles } from './settings';

interface PidRecord {
  pid: number;
  exe: string;
}

export interface DaemonSpec extends DaemonFiles {
  exe: string;
  args: string[];
  cwd: string;
  env?: NodeJS.ProcessEnv;
}

/** The command line /proc shows for a pid, or undefined when it is gone (or not Linux). */
function cmdline(pid: number): string[] | undefined {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
  } catch {
    return undefined;
  }
}

/** The recorded process's pid when it is still the one we started, else undefined. */
export function runningPid(files: DaemonFiles): number | undefined {
  let record: PidRecord;
  try {
    record = JSON.parse(fs.readFileSync(files.pidFile, 'utf8')) as PidRecord;
  } catch {
    return undefined;
  }
  const argv = cmdline(record.pid);
  return argv?.[0] === record.exe ? record.pid : undefined;
}

export function startDaemon(spec: DaemonSpec): number {
  fs.mkdirSync(path.dirname(spec.logFile), { recursive: true });
  const fd = fs.openSync(spec.logFile, 'a');
  fs.writeSync(fd, `\n--- ${new Date().toISOString()} ${spec.exe} ${spec.args.join(' ')}\n`);
  const child = spawn(spec.exe, spec.args, {
    cwd: spec.cwd,
    env: spec.env ?? process.env,
    stdio: ['ignore', fd, fd],
    detached: true,
  });
  fs.closeSync(fd);
  if (!child.pid) throw new Error(`could not start ${spec.exe}`);
  child.unref();
  fs.writeFileSync(spec.pidFile, JSON.stringify({ pid: child.pid, exe: spec.exe } satisfies PidRecord));
  return child.pid;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** SIGTERM to the process group, SIGKILL after the grace period; returns the pid it stopped. */
export async function stopDaemon(files: DaemonFiles, graceMs = 15_000): Promise<number | undefined> {
  const pid = runningPid(files);
  if (pid !== undefined) {
    const signal = (sig: NodeJS.Signals) => {
      try {
        process.kill(-pid, sig);
      } catch {
        // The group is already gone.
      }
    };
    signal('SIGTERM');
    const alive = () => runningPid(files) === pid;
    const deadline = Date.now() + graceMs;
    while (alive() && Date.now() < deadline) await sleep(200);
    if (alive()) signal('SIGKILL');
    while (alive()) await sleep(100);
  }
  fs.rmSync(files.pidFile, { force: true });
  return pid;
}

/** The last lines of a log, for error messages. */
export function logTail(file: string, lines = 15): string {
  try {
    return fs.readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

/** Polls `check` until it returns true; throws `what` with the log's tail on timeout or when the process died. */
export async function waitFor(
  what: string,
  check: () => Promise<boolean>,
  opts: DaemonFiles & { timeoutMs: number },
): Promise<void> {
  const deadline = Date.now() + opts.timeoutMs;
  for (;;) {
    if (await check()) return;
    if (runningPid(opts) === undefined)
      throw new Error(`${what}: the process exited. Last lines of ${opts.logFile}:\n${logTail(opts.logFile)}`);
    if (Date.now() > deadline)
      throw new Error(
        `${what}: not within ${opts.timeoutMs / 1000} s. Last lines of ${opts.logFile}:\n${logTail(opts.logFile)}`,
      );
    await sleep(500);
  }
}
