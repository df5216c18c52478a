/**
 * The cluster's Go-built binaries: Temporal server, its SQL schema tool and the standalone Web
 * UI, built once with `go install` into the per-user cache (next to the cached `temporal` CLI)
 * and reused afterwards. The server module's schema files and config templates are copied
 * next to the binary, so a later `go clean -modcache` does not break `up`.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { goInstall, handrailCacheDir, isExecutable, onPath } from '../tool-cache';

export const TEMPORAL_SERVER_VERSION = '1.29.1';
export const UI_SERVER_VERSION = '2.42.1';

interface GoBinary {
  /** Cache folder name; each binary gets its own GOBIN (two are called `server`). */
  name: string;
  pkg: string;
  version: string;
  exe: string;
}

const BINARIES = {
  server: {
    name: 'temporal-server',
    pkg: 'go.temporal.io/server/cmd/server',
    version: TEMPORAL_SERVER_VERSION,
    exe: 'server',
  },
  sqlTool: {
    name: 'temporal-sql-tool',
    pkg: 'go.temporal.io/server/cmd/tools/sql',
    version: TEMPORAL_SERVER_VERSION,
    exe: 'sql',
  },
  uiServer: {
    name: 'temporal-ui-server',
    pkg: 'github.com/temporalio/ui-server/v2/cmd/server',
    version: UI_SERVER_VERSION,
    exe: 'server',
  },
} as const satisfies Record<string, GoBinary>;

/** What the server module contributes besides its binaries, relative to the module root. */
export const SERVER_MODULE_FILES = {
  schema: 'schema/postgresql/v12',
  config: 'config/development-postgres12.yaml',
  dynamicConfig: 'config/dynamicconfig/development-sql.yaml',
} as const;

export type ClusterBinaries = Record<keyof typeof BINARIES, string> & {
  /** Copies of SERVER_MODULE_FILES, same layout. */
  serverModule: string;
};

const binaryDir = (b: GoBinary, env: NodeJS.ProcessEnv): string => path.join(handrailCacheDir(env), b.name, b.version);

/** Where the server module's source is, downloading it into GOMODCACHE when needed. */
function serverModuleDir(env: NodeJS.ProcessEnv): string {
  const res = spawnSync('go', ['mod', 'download', '-json', `go.temporal.io/server@v${TEMPORAL_SERVER_VERSION}`], {
    env,
    encoding: 'utf8',
  });
  const dir = res.status === 0 ? (JSON.parse(res.stdout) as { Dir?: string }).Dir : undefined;
  if (!dir)
    throw new Error(
      `go mod download go.temporal.io/server@v${TEMPORAL_SERVER_VERSION} failed: ${res.stderr || res.error?.message}`,
    );
  return dir;
}

/** The binaries, building what the cache lacks (minutes the first time; says what it builds). */
export function ensureClusterBinaries(env: NodeJS.ProcessEnv, log: (msg: string) => void): ClusterBinaries {
  const missing = Object.values(BINARIES).filter((b) => !isExecutable(path.join(binaryDir(b, env), b.exe)));
  const serverModule = path.join(binaryDir(BINARIES.server, env), 'module');
  const moduleCopied = Object.values(SERVER_MODULE_FILES).every((f) => fs.existsSync(path.join(serverModule, f)));
  if ((missing.length > 0 || !moduleCopied) && !onPath('go', env)) {
    throw new Error(
      `the cluster needs ${[...missing.map((b) => `${b.pkg}@v${b.version}`), ...(moduleCopied ? [] : ['the Temporal server module files'])].join(', ')}, built with Go, and there is no \`go\` on PATH: install Go 1.24+`,
    );
  }
  for (const b of missing) {
    const started = Date.now();
    log(`handrail: building ${b.pkg}@v${b.version} into ${binaryDir(b, env)} (first run only; minutes on 2 cores) ...`);
    const failure = goInstall(b.pkg, b.version, binaryDir(b, env), env);
    if (failure) throw new Error(failure);
    log(`handrail: built ${b.name} in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  }
  if (!moduleCopied) {
    const source = serverModuleDir(env);
    for (const file of Object.values(SERVER_MODULE_FILES)) {
      fs.cpSync(path.join(source, file), path.join(serverModule, file), { recursive: true });
    }
    // Module cache files are read-only, and so would the copies be (and undeletable for a non-root user).
    spawnSync('chmod', ['-R', 'u+w', serverModule]);
  }
  const at = (b: GoBinary) => path.join(binaryDir(b, env), b.exe);
  return { server: at(BINARIES.server), sqlTool: at(BINARIES.sqlTool), uiServer: at(BINARIES.uiServer), serverModule };
}
