/**
 * The product's workflow bundle, built once per test run for every project that lists this setup
 * (replay and integration): webpack takes seconds, and the code is the same for all of them.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { bundleWorkflows } from '../src/replay';
import { BUILT_IN_WORKFLOWS } from '../src/pipelines';

declare module 'vitest' {
  export interface ProvidedContext {
    workflowBundlePath: string;
  }
}

interface BuiltBundle {
  file: string;
  users: number;
}

// Each project runs its global setups itself, in this one process: the first one to get here
// builds, the others wait for that build (kept on globalThis, which outlives a re-imported module).
const shared = globalThis as typeof globalThis & { handrailWorkflowBundle?: Promise<BuiltBundle> };

async function build(): Promise<BuiltBundle> {
  const started = Date.now();
  const bundle = await bundleWorkflows(BUILT_IN_WORKFLOWS.workflowsPath, BUILT_IN_WORKFLOWS.preloadModules);
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'handrail-bundle-')), 'workflow-bundle.js');
  fs.writeFileSync(file, bundle.code);
  console.log(`[handrail] workflow bundle built in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return { file, users: 0 };
}

export default async function setup(project: TestProject): Promise<() => void> {
  const built = await (shared.handrailWorkflowBundle ??= build());
  built.users++;
  project.provide('workflowBundlePath', built.file);
  return () => {
    if (--built.users === 0) fs.rmSync(path.dirname(built.file), { recursive: true, force: true });
  };
}
