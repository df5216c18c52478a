/**
 * How every worker, replay and test builds a rail's workflow bundle. With the SDK's reused V8
 * context, each workflow run evaluates the bundle's modules afresh, so their functions start cold
 * and their tables are built again every run; the contracts the rail runs on every hop (zod-free,
 * contracts/rail.ts) and the built-in pipelines are instead preloaded once and shared by all runs
 * (frozen by the SDK). Measured: sha256 in workflow code went from 7.5 % of replay's busy time to
 * 0.5 %, and a run's own module evaluation from 2.9 to 1.0 ms (docs/benchmarks.md "Profile").
 */
import {
  bundleWorkflowCode,
  DefaultLogger,
  type BundleOptions,
  type Logger,
  type WorkflowBundleWithSourceMap,
} from '@temporalio/worker';
import { modulePath } from '../package-paths';

/** Paths, not module names: vitest resolves no .ts through require.resolve. Nothing here, or
 * imported from here, may hold state or build zod schemas (zod 4 defines a schema's members on
 * first use, and frozen it throws): test/unit/foundation/worker-bundle.test.ts walks the imports.
 * A user's own pipelines are evaluated per run, as any workflow module, unless the plugin is told
 * to preload them (`preloadModules`). */
export const SHARED_WORKFLOW_MODULES = [
  ...['sha256', 'canonical-json', 'rail'].map((file) => `contracts/${file}`),
  // The rail's pure decisions: warm across runs instead of evaluated cold in each.
  'workflows/rail/hop-decisions',
  'workflows/rail/conclude',
  'workflows/rail/merge',
  'workflows/rail/routing',
  'workflows/rail/escalation-record',
  'workflows/rail/first-package',
].map(modulePath);

type WebpackConfig = Parameters<NonNullable<BundleOptions['webpackConfigHook']>>[0];

/** The SDK compiles workflow TypeScript to ES2017, so every object spread and class field became a
 * helper call (`_object_spread`, `_define_property`: 2.5 % of the workflow thread's busy time in
 * the bench). Node runs ES2022 natively; the code means the same, so histories replay alike. */
function nativeSyntax(config: WebpackConfig): WebpackConfig {
  for (const rule of config.module?.rules ?? []) {
    const use = rule && typeof rule === 'object' ? rule.use : undefined;
    if (
      use &&
      typeof use === 'object' &&
      !Array.isArray(use) &&
      String(use.loader).includes('swc-loader') &&
      typeof use.options === 'object'
    ) {
      const options = use.options as { jsc?: { target?: string } };
      if (options.jsc) options.jsc.target = 'es2022';
    }
  }
  return config;
}

/** The SDK's bundle options for a rail: the shared contracts and `extra` preloaded, native syntax,
 * on top of `options` (a hook already there runs first). */
export function railBundlerOptions(options: BundleOptions, extra: readonly string[] = []): BundleOptions {
  const theirs = options.webpackConfigHook;
  return {
    ...options,
    preloadModules: [...new Set([...(options.preloadModules ?? []), ...SHARED_WORKFLOW_MODULES, ...extra])],
    webpackConfigHook: (config) => nativeSyntax(theirs ? theirs(config) : config),
  };
}

/** Bundles a workflows module as the worker would; webpack's stats stay quiet unless told. */
export function bundleRail(
  workflowsPath: string,
  logger: Logger = new DefaultLogger('WARN'),
  preload: readonly string[] = [],
): Promise<WorkflowBundleWithSourceMap> {
  return bundleWorkflowCode(
    railBundlerOptions({ workflowsPath, logger }, preload) as Parameters<typeof bundleWorkflowCode>[0],
  );
}
