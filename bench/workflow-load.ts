/**
 * What a workflow run pays to load the workflow bundle's own modules. With the SDK's default
 * reusable V8 context (1.24, `reuseV8Context: true`), the bundle runs once per context, but every
 * workflow run gets a fresh webpack module cache: only modules required before the first run
 * (the SDK's own, and the bundle's `preloadModules`: the rail's contracts and the built-in
 * pipelines, src/worker/bundle.ts) are shared, frozen; the workflows module and everything else it
 * imports are evaluated again per run.
 * This script does what the SDK does (shared cache, then a per-run cache) outside a worker and
 * times `importWorkflows()`; it also counts zod schema constructions per run.
 *
 * `npx tsx bench/workflow-load.ts [--runs 200] [--bundle file.js | --workflows bench/baseline/workflow.ts]`;
 * without `--bundle`, it bundles `--workflows` (workflows/index.ts) into a temp file first and
 * names it, for bench/profile-summary.ts `--bundle`.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import vm from 'node:vm';
import { HANDRAIL_WORKFLOWS, writeBundle } from './lab';
import { runMain } from './report';

const { values: args } = parseArgs({
  options: {
    runs: { type: 'string', default: '200' },
    bundle: { type: 'string' },
    workflows: { type: 'string', default: HANDRAIL_WORKFLOWS },
  },
});

// Counts zod schema instances (every z.object(), .optional(), .regex() … makes one).
const ZOD_INIT = '_zodDesc.value = new Internals(def);';

interface LoadFigures {
  runs: number;
  ms_per_run: number;
  zod_schemas_per_run: number;
  modules_per_run: number;
  shared_modules: number;
}

export function measureWorkflowLoad(code: string, runs: number): LoadFigures {
  const counted =
    code.split(ZOD_INIT).length === 2 ? code.replace(ZOD_INIT, `globalThis.__zodInits++; ${ZOD_INIT}`) : code;
  const shared = new Map<string | symbol, unknown>();
  let perRun: Map<string | symbol, unknown> | null = null;
  const context = vm.createContext({ __zodInits: 0 });
  // The SDK's cache: shared until a workflow exists, then per workflow (reusable-vm.js).
  Object.defineProperty(context, '__webpack_module_cache__', {
    value: new Proxy(
      {},
      {
        get: (_, p) => shared.get(p) ?? perRun?.get(p),
        set: (_, p, v) => {
          (perRun ?? shared).set(p, v);
          return true;
        },
      },
    ),
  });
  new vm.Script(counted).runInContext(context);
  const temporal = context.__TEMPORAL__ as { importWorkflows(): unknown; preloadModules?: () => void };
  temporal.preloadModules?.();
  const sharedModules = shared.size;
  // What the rail reads of the workflow's info at load time (its stage proxies' task queues).
  context.__TEMPORAL_ACTIVATOR__ = { info: { taskQueue: 'workflow-load' } };
  const once = () => {
    perRun = new Map();
    temporal.importWorkflows();
    return perRun.size;
  };
  for (let i = 0; i < 20; i++) once(); // warm-up (JIT)
  context.__zodInits = 0;
  let modules = 0;
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < runs; i++) modules = once();
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  return {
    runs,
    ms_per_run: ms / runs,
    zod_schemas_per_run: (context.__zodInits as number) / runs,
    modules_per_run: modules,
    shared_modules: sharedModules,
  };
}

async function main(): Promise<void> {
  const bundle =
    args.bundle ??
    (await writeBundle(
      path.resolve(args.workflows),
      path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'handrail-load-')), 'workflows.js'),
    ));
  const f = measureWorkflowLoad(fs.readFileSync(bundle, 'utf8'), Number(args.runs));
  console.log(
    `workflow bundle ${bundle}: ${f.ms_per_run.toFixed(2)} ms per run to evaluate its modules (${f.modules_per_run} modules per run, ${f.shared_modules} shared), ${f.zod_schemas_per_run} zod schemas built per run, over ${f.runs} runs`,
  );
}

if (require.main === module) runMain(main);
