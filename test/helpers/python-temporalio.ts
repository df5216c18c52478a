/**
 * Python SDKs for tests that drive handrail from another language (Temporal's, to run a stage; the
 * A2A SDK's client): installed once per user with pip into the handrail cache
 * (`py-temporalio/<version>`, ...), never into the machine's Python.
 * A machine without python3, or where the install fails, gets the reason instead, which the
 * calling test puts in its skipped suite's name.
 */
import fs from 'node:fs';
import path from 'node:path';
import { handrailCacheDir, onPath, runQuiet } from '../../src/devtools/tool-cache';

export const PY_TEMPORALIO_VERSION = '1.35.0';

export interface PythonSdk {
  python: string;
  /** The PYTHONPATH under which the pinned SDK is imported. */
  pythonPath: string;
}

const INSTALL_TIMEOUT_MS = 240_000;

/** The pinned SDK, installed when missing; a string says why it cannot be had here. */
export function pythonTemporalio(env: NodeJS.ProcessEnv = process.env): PythonSdk | string {
  return pipPackage(
    { name: 'temporalio', version: PY_TEMPORALIO_VERSION, imports: 'temporalio.worker', dir: 'py-temporalio' },
    env,
  );
}

/** A pinned Python package (with its dependencies) in the handrail cache (`<dir>/<version>`),
 * installed when missing; a string says why it cannot be had here. */
export function pipPackage(
  pkg: { name: string; version: string; imports: string; dir: string },
  env: NodeJS.ProcessEnv = process.env,
): PythonSdk | string {
  const python = onPath('python3', env);
  if (!python) return 'python3 is not on PATH';
  const target = path.join(handrailCacheDir(env), pkg.dir, pkg.version);
  const importable = (dir: string) =>
    runQuiet(python, ['-c', `import ${pkg.imports}`], { ...env, PYTHONPATH: dir }, 60_000);
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
    `${pkg.name}==${pkg.version}`,
  ];
  const failed = runQuiet(python, args, env, INSTALL_TIMEOUT_MS) ?? importable(partial);
  if (failed) {
    fs.rmSync(partial, { recursive: true, force: true });
    return `pip install ${pkg.name}==${pkg.version} failed: ${failed}`;
  }
  fs.rmSync(target, { recursive: true, force: true });
  fs.renameSync(partial, target);
  return { python, pythonPath: target };
}
