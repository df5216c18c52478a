/**
 * The build an eval runs and records: the pipelines with their stage activities and workflow
 * module (the built-in ones, or a module's), the git commit they came from, a digest of each
 * pipeline's definition, and the user's scorers.
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { canonicalJson, type Pipeline } from '../../contracts';
import { sha256Hex } from '../../contracts/sha256';
import { packageRoot } from '../package-paths';
import { loadDiffPipelines, type DiffPipelines } from '../replay';
import type { BuildInfo, Scorer } from './types';

/** What an eval runs on: replay --diff's pipelines and activities, and the workflow module fresh jobs run in. */
export interface EvalBuild extends DiffPipelines {
  /** The workflow module exporting `createRail(pipelines)`'s workflows; fresh runs need it. */
  workflowsPath?: string;
  preloadModules?: readonly string[];
  /** The module it came from; undefined for the built-in pipelines. */
  module?: string;
}

export class EvalModuleError extends Error {
  override readonly name = 'EvalModuleError';
}

/**
 * A module exporting `pipelines` and `activities` (as `replay --diff --pipelines` takes it) and,
 * for fresh runs, `workflowsPath`: the workflow module over the same pipelines (`preloadModules` optional).
 */
export async function loadEvalBuild(modulePath: string): Promise<EvalBuild> {
  const diff = await loadDiffPipelines(modulePath);
  const loaded = (await import(path.resolve(modulePath))) as { workflowsPath?: unknown; preloadModules?: unknown };
  return {
    ...diff,
    ...(typeof loaded.workflowsPath === 'string' ? { workflowsPath: loaded.workflowsPath } : {}),
    ...(Array.isArray(loaded.preloadModules) ? { preloadModules: loaded.preloadModules as string[] } : {}),
    module: modulePath,
  };
}

/** A digest of what decides a pipeline's jobs: stages, routes (a predicate by its source), revisits and edges. */
export function pipelineDigest(pipeline: Pipeline): string {
  const routes = pipeline.routes.map((r) =>
    Object.fromEntries(Object.entries(r).map(([k, v]) => [k, typeof v === 'function' ? String(v) : v])),
  );
  const definition = {
    cards: pipeline.cards,
    routes,
    revisits: pipeline.revisits,
    edges: pipeline.edges,
    entry: pipeline.entry,
  };
  return sha256Hex(canonicalJson(JSON.parse(JSON.stringify(definition)))).slice(0, 16);
}

function git(args: string[], cwd: string): string | undefined {
  try {
    return execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return undefined;
  }
}

/** The build as recorded with results: the commit of the work tree `cwd` is in (none outside git). */
export function buildInfo(build: EvalBuild, cwd = process.cwd()): BuildInfo {
  const commit = git(['rev-parse', 'HEAD'], cwd);
  const status = commit === undefined ? undefined : git(['status', '--porcelain', '--untracked-files=no'], cwd);
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- the package's own version, read once
  const { version } = require(path.join(packageRoot, 'package.json')) as { version: string };
  return {
    ...(commit ? { commit } : {}),
    ...(status === undefined ? {} : { dirty: status.length > 0 }),
    pipelines: Object.fromEntries(build.pipelines.map((p) => [p.name, pipelineDigest(p)])),
    ...(build.module ? { module: build.module } : {}),
    handrail: version,
  };
}

const isScorer = (s: unknown): s is Scorer =>
  typeof s === 'object' &&
  s !== null &&
  typeof (s as Scorer).name === 'string' &&
  /^[a-z][a-z0-9_]*$/.test((s as Scorer).name) &&
  typeof (s as Scorer).score === 'function';

/**
 * A module's scorers: `export const scorers = [{ name, description?, unit?, score(job) }]` (or a
 * default export of that list). `score` gets the job (its package, acks and artifacts with their
 * bodies) and returns a number, or undefined when it does not apply.
 */
export async function loadScorers(modulePath: string): Promise<Scorer[]> {
  let loaded: { scorers?: unknown; default?: unknown };
  try {
    loaded = (await import(path.resolve(modulePath))) as typeof loaded;
  } catch (err) {
    throw new EvalModuleError(`--scorers ${modulePath}: ${(err as Error).message}`);
  }
  const list = loaded.scorers ?? (loaded.default as { scorers?: unknown } | undefined)?.scorers ?? loaded.default;
  if (!Array.isArray(list) || list.length === 0 || !list.every(isScorer))
    throw new EvalModuleError(
      `--scorers ${modulePath} must export \`scorers\`: a list of { name (lowercase, digits, _), score(job) => number | undefined }`,
    );
  return list.map((s: Scorer) => ({ ...s, description: s.description ?? s.name, unit: s.unit ?? 'score' }));
}
