/**
 * How every worker, replay and test builds a rail's workflow bundle. With the SDK's reused V8
 * context, each workflow run evaluates the bundle's modules afresh, so their functions start cold
 * and their tables are built again every run; the contracts the rail runs on every hop (zod-free,
 * contracts/rail.ts) and the built-in pipelines are instead preloaded once and shared by all runs
 * (frozen by the SDK). Measured: sha256 in workflow code went from 7.5 % of replay's busy time to
 * 0.5 %, and a run's own module evaluation from 2.9 to 1.0 ms (docs/benchmarks.md "Profile").
 */
import path from 'node:path';
import { bundleWorkflowCode, DefaultLogger, type BundleOptions, type Logger, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { PROJECT_ROOT } from '../config';

/** Paths, not module names: vitest resolves no .ts through require.resolve. Nothing here, or
 * imported from here, may hold state or build zod schemas (zod 4 defines a schema's members on
 * first use, and frozen it throws): test/unit/foundation/worker-bundle.test.ts walks the imports.
 * A user's own pipelines are evaluated per run, as any workflow module. */
export const SHARED_WORKFLOW_MODULES = ['sha256.ts', 'canonical-json.ts', 'rail.ts', 'pipelines/index.ts'].map((file) => path.join(PROJECT_ROOT, 'contracts', file));

type WebpackConfig = Parameters<NonNullable<BundleOptions['webpackConfigHook']>>[0];

/** The SDK compiles workflow TypeScript to ES2017, so every object spread and class field became a
 * helper call (`_object_spread`, `_define_property`: 2.5 % of the workflow thread's busy time in
 * the bench). Node runs ES2022 natively; the code means the same, so histories replay alike. */
function nativeSyntax(config: WebpackConfig): WebpackConfig {
  for (const rule of config.module?.rules ?? []) {
    const use = rule && typeof rule === 'object' ? rule.use : undefined;
    if (use && typeof use === 'object' && !Array.isArray(use) && String(use.loader).includes('swc-loader') && typeof use.options === 'object') {
      const options = use.options as { jsc?: { target?: string } };
      if (options.jsc) options.jsc.target = 'es2022';
    }
  }
  return config;
}

/** The SDK's bundle options for a workflows module of handrail's (Worker.create's `bundlerOptions`). */
export const RAIL_BUNDLER_OPTIONS = { preloadModules: SHARED_WORKFLOW_MODULES, webpackConfigHook: nativeSyntax };

/** Bundles a workflows module as the worker would; webpack's stats stay quiet unless told. */
export function bundleRail(workflowsPath: string, logger: Logger = new DefaultLogger('WARN')): Promise<WorkflowBundleWithSourceMap> {
  return bundleWorkflowCode({ workflowsPath, logger, ...RAIL_BUNDLER_OPTIONS });
}
