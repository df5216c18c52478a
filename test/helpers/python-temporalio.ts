/**
 * Temporal's Python SDK for tests that run a stage in another language: installed once per user
 * with pip into the handrail cache (`py-temporalio/<version>`), never into the machine's Python.
 * A machine without python3, or where the install fails, gets the reason instead, which the
 * calling test puts in its skipped suite's name.
 */
import fs from 'node:fs';
import path from 'node:path';
import { handrailCacheDir, onPath, runQuiet } from '../../src/devtools/tool-cache';

export const PY_TEMPORALIO_VERSION = '1.35.0';

export interface PythonSdk {
  python: string;
  /** The PYTHONPATH under which `import temporalio` finds the pinned SDK. */
  pythonPath: string;
}

const INSTALL_TIMEOUT_MS = 240_000;

/** The pinned SDK, installed when missing; a string says why it cannot be had here. */
export function pythonTemporalio(env: NodeJS.ProcessEnv = process.env): PythonSdk | string {
  const python = onPath('python3', env);
  if (!python) return 'python3 is not on PATH';
  const target = path.join(handrailCacheDir(env), 'py-temporalio', PY_TEMPORALIO_VERSION);
  const importable = (dir: string) =>
    runQuiet(python, ['-c', 'import temporalio.worker'], { ...env, PYTHONPATH: dir }, 60_000);
  if (fs.existsSync(target) && importable(target) === undefined) return { python, pythonPath: target };
  // Installed beside the final place and renamed into it, so a run cut short leaves no half SDK.
  const partial = `${target}.partial-${process.pid}`;
  fs.rmSync(partial, { recursive: true, force: true });
  const args = [
    '-m',
    'pip',
    'install',
    '--quiet',
    '--disable-pip-version-check',
    '--no-input',
    '--target',
    partial,
    `temporalio==${PY_TEMPORALIO_VERSION}`,
  ];
  const failed = runQuiet(python, args, env, INSTALL_TIMEOUT_MS) ?? importable(partial);
  if (failed) {
    fs.rmSync(partial, { recursive: true, force: true });
    return `pip install temporalio==${PY_TEMPORALIO_VERSION} failed: ${failed}`;
  }
  fs.rmSync(target, { recursive: true, force: true });
  fs.renameSync(partial, target);
  return { python, pythonPath: target };
}
