/**
 * The cluster's Temporal server: schema on the cluster's PostgreSQL (temporal-sql-tool), a
 * config derived from the module's development-postgres12.yaml, all services in one process,
 * then the namespace and handrail's search attributes.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Connection, isGrpcServiceError } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time';
import { registerSearchAttributes } from '../devserver/server';
import { SERVER_MODULE_FILES, type ClusterBinaries } from './binaries';
import { withAdmin } from './postgres';
import { runningPid, startDaemon, waitFor } from './processes';
import { dynamicConfigYaml, serverConfigYaml } from './server-config';
import { SERVER_CONFIG_ENV, frontendAddress, type ClusterSettings } from './settings';

/** Temporal's two databases and where their versioned schemas live in the module. */
const SCHEMAS = [
  { database: 'temporal', dir: 'temporal' },
  { database: 'temporal_visibility', dir: 'visibility' },
] as const;
export const TEMPORAL_DATABASES = SCHEMAS.map((s) => s.database);

/** Jobs stay visible this long after they close (the dev server's default too). */
const RETENTION = '3 days';
const GRPC_NOT_FOUND = 5;

/** setup-schema the first time (no schema_version table yet), then update-schema, which is a
 * no-op when the schema is current: re-running `up` is safe. */
export async function applySchemas(
  s: ClusterSettings,
  bins: ClusterBinaries,
  log: (msg: string) => void,
): Promise<void> {
  for (const { database, dir } of SCHEMAS) {
    const tool = (args: string[]) => {
      const common = [
        '--plugin',
        'postgres12',
        '--ep',
        s.host,
        '-p',
        String(s.postgres.port),
        '-u',
        s.postgres.user,
        '--db',
        database,
      ];
      const run = spawnSync(bins.sqlTool, [...common, ...args], { encoding: 'utf8' });
      if (run.status !== 0)
        throw new Error(`temporal-sql-tool ${args.join(' ')} on ${database} failed:\n${run.stdout}${run.stderr}`);
    };
    const fresh = await withAdmin(
      s,
      async (db) => (await db.query("SELECT to_regclass('public.schema_version') AS t")).rows[0].t === null,
      database,
    );
    if (fresh) {
      log(`handrail: setting up the ${database} schema`);
      tool(['setup-schema', '-v', '0.0']);
    }
    tool(['update-schema', '-d', path.join(bins.serverModule, SERVER_MODULE_FILES.schema, dir, 'versioned')]);
  }
}

/** (Re)writes config/cluster.yaml and its dynamic config from the module's templates. */
export function writeServerConfig(s: ClusterSettings, bins: ClusterBinaries): void {
  const dynamicConfigFile = path.join(
    s.server.configDir,
    'dynamicconfig',
    path.basename(SERVER_MODULE_FILES.dynamicConfig),
  );
  fs.mkdirSync(path.dirname(dynamicConfigFile), { recursive: true });
  const read = (file: string) => fs.readFileSync(path.join(bins.serverModule, file), 'utf8');
  fs.writeFileSync(dynamicConfigFile, dynamicConfigYaml(read(SERVER_MODULE_FILES.dynamicConfig), s.server.portOffset));
  const config = serverConfigYaml(read(SERVER_MODULE_FILES.config), {
    portOffset: s.server.portOffset,
    postgresAddress: `${s.host}:${s.postgres.port}`,
    postgresUser: s.postgres.user,
    dynamicConfigFile,
    logLevel: 'warn',
  });
  fs.writeFileSync(path.join(s.server.configDir, `${SERVER_CONFIG_ENV}.yaml`), config);
}

export function startTemporalServer(s: ClusterSettings, bins: ClusterBinaries): number {
  return startDaemon({
    ...s.server,
    exe: bins.server,
    args: [
      '--root',
      s.root,
      '--config',
      path.relative(s.root, s.server.configDir),
      '--env',
      SERVER_CONFIG_ENV,
      '--allow-no-auth',
      'start',
    ],
    cwd: s.root,
  });
}

/** A short-lived connection that has seen the frontend answer, or undefined. */
async function frontendConnection(s: ClusterSettings): Promise<Connection | undefined> {
  try {
    const connection = await Connection.connect({ address: frontendAddress(s), connectTimeout: 2_000 });
    try {
      await connection.workflowService.getSystemInfo({});
      return connection;
    } catch {
      await connection.close();
    }
  } catch {
    // Not listening yet.
  }
  return undefined;
}

export async function temporalServerUp(s: ClusterSettings): Promise<boolean> {
  if (runningPid(s.server) === undefined) return false;
  const connection = await frontendConnection(s);
  await connection?.close();
  return connection !== undefined;
}

/** Waits for the frontend, then registers the namespace (when missing) and the search
 * attributes; retried because a fresh server answers before its namespace cache has the namespace. */
export async function prepareNamespace(s: ClusterSettings, log: (msg: string) => void): Promise<void> {
  await waitFor('the Temporal server did not come up', () => temporalServerUp(s), { ...s.server, timeoutMs: 90_000 });
  const connection = await frontendConnection(s);
  if (!connection)
    throw new Error(`the Temporal server at ${frontendAddress(s)} stopped answering (see ${s.server.logFile})`);
  try {
    let lastError: unknown;
    const done = async (): Promise<boolean> => {
      try {
        await connection.workflowService.describeNamespace({ namespace: s.namespace }).catch(async (err: unknown) => {
          if (!isGrpcServiceError(err) || err.code !== GRPC_NOT_FOUND) throw err;
          log(`handrail: registering namespace "${s.namespace}"`);
          await connection.workflowService.registerNamespace({
            namespace: s.namespace,
            workflowExecutionRetentionPeriod: msToTs(RETENTION),
          });
        });
        const added = await registerSearchAttributes(connection, s.namespace);
        if (added.length) log(`handrail: registered search attributes ${added.join(', ')}`);
        return true;
      } catch (err) {
        lastError = err;
        return false;
      }
    };
    await waitFor(`namespace "${s.namespace}" and its search attributes`, done, {
      ...s.server,
      timeoutMs: 60_000,
    }).catch((err: Error) => {
      throw new Error(`${err.message}\nlast error: ${String(lastError)}`);
    });
  } finally {
    await connection.close();
  }
}
