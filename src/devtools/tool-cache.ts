/**
 * Helpers for the developer tools handrail provisions itself (the `temporal` CLI, the cluster's
 * Go-built server binaries): the per-user cache they live in, and running build commands.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** Per-user cache so fresh clones and CI runs on the same machine reuse one install:
 * HANDRAIL_CACHE_DIR, else `$XDG_CACHE_HOME/handrail`, else `~/.cache/handrail`. */
export function handrailCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.HANDRAIL_CACHE_DIR || path.join(env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'), 'handrail');
}

export function isExecutable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

export function onPath(name: string, env: NodeJS.ProcessEnv): string | undefined {
  for (const dir of (env.PATH || '').split(path.delimiter)) {
    if (dir && isExecutable(path.join(dir, name))) return path.join(dir, name);
  }
  return undefined;
}

/** Runs a command; returns a one-line reason on failure, undefined on success. */
export function runQuiet(cmd: string, args: string[], env: NodeJS.ProcessEnv, timeoutMs: number): string | undefined {
  const res = spawnSync(cmd, args, { env, encoding: 'utf8', timeout: timeoutMs, stdio: ['ignore', 'pipe', 'pipe'] });
  if (res.error) return res.error.message;
  if (res.status !== 0) {
    const tail = `${res.stderr || ''}${res.stdout || ''}`.trim().split('\n').slice(-2).join(' | ');
    return `exit ${res.status}: ${tail}`;
  }
  return undefined;
}

/** `CGO_ENABLED=0 go install <pkg>@v<version>` into `gobin` (one folder per binary: several Go
 * commands share the name `server`). Returns a one-line reason on failure. */
export function goInstall(
  pkg: string,
  version: string,
  gobin: string,
  env: NodeJS.ProcessEnv,
  ldflags?: string,
): string | undefined {
  const go = onPath('go', env);
  if (!go) return 'no go on PATH';
  fs.mkdirSync(gobin, { recursive: true });
  const args = ['install', ...(ldflags ? ['-ldflags', ldflags] : []), `${pkg}@v${version}`];
  const failure = runQuiet(go, args, { ...env, CGO_ENABLED: '0', GOBIN: gobin }, 45 * 60_000);
  return failure && `go install ${pkg}@v${version} failed (${failure})`;
}
