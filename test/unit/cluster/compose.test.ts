/**
 * docker-compose.yml describes the stack `npm run cluster` runs and the tests exercise: the same
 * server and UI versions, the same worker processes (roles, task queues, the
 * env var names each reads), the writer alone holding the CRM's URL, and the same databases.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { writerTaskQueue } from '../../../contracts';
import { CRM_DATABASE_URL_ENV, codeRoot, WORKER_ROLE_ENV, loadConfig } from '../../../src/config';
import { TEMPORAL_SERVER_VERSION, UI_SERVER_VERSION } from '../../../src/devtools/cluster/binaries';
import { clusterEnv, clusterSettings } from '../../../src/devtools/cluster/settings';

interface Service {
  image?: string;
  build?: string;
  environment?: Record<string, string>;
  command?: string[];
}

// `merge`: the writer's environment extends the general worker's (`<<: *worker-env`).
const compose = parse(fs.readFileSync(path.join(codeRoot, 'docker-compose.yml'), 'utf8'), { merge: true }) as {
  services: Record<string, Service>;
};
const services = Object.entries(compose.services);
const cluster = clusterSettings(loadConfig({}));
const databaseOf = (url: string | undefined) => (url ? new URL(url).pathname.slice(1) : undefined);
const tagOf = (image: string | undefined) => image?.split(':')[1];

describe('docker-compose.yml mirrors the cluster', () => {
  it('runs the Temporal server and admin tools at the cluster server version, the UI at its ui-server version', () => {
    const images = services.map(([, s]) => s.image).filter((i): i is string => i !== undefined);
    const temporal = images.filter((i) => /^temporalio\/(server|admin-tools):/.test(i));
    expect(temporal.length).toBeGreaterThanOrEqual(2);
    for (const image of temporal) expect(tagOf(image)).toBe(TEMPORAL_SERVER_VERSION);
    expect(images.filter((i) => i.startsWith('temporalio/ui:')).map(tagOf)).toEqual([UI_SERVER_VERSION]);
  });

  it('runs one service per cluster worker, same role, same env var names, same task queues', () => {
    const workers = services.filter(([, s]) => s.build !== undefined);
    const byRole = new Map(
      workers.map(([name, s]) => [s.environment?.[WORKER_ROLE_ENV], { name, env: s.environment ?? {} }]),
    );
    expect([...byRole.keys()].sort()).toEqual(cluster.workers.map((w) => w.role).sort());
    for (const spec of cluster.workers) {
      const service = byRole.get(spec.role)!;
      expect(Object.keys(service.env).sort(), service.name).toEqual(
        Object.keys({ ...clusterEnv(cluster), ...spec.env }).sort(),
      );
      expect(service.env.HANDRAIL_TASK_QUEUE).toBe(cluster.taskQueue);
      const polls =
        spec.role === 'writer' ? writerTaskQueue(service.env.HANDRAIL_TASK_QUEUE!) : service.env.HANDRAIL_TASK_QUEUE;
      expect([polls]).toEqual(spec.taskQueues);
      expect(databaseOf(service.env.DATABASE_URL)).toBe(cluster.postgres.storeDatabase);
    }
  });

  it('gives the CRM URL to the writer alone, on the CRM database the schema setup creates', () => {
    const holders = services.filter(([, s]) => s.environment?.[CRM_DATABASE_URL_ENV] !== undefined);
    expect(holders.map(([, s]) => s.environment?.[WORKER_ROLE_ENV])).toEqual(['writer']);
    expect(databaseOf(holders[0]![1].environment![CRM_DATABASE_URL_ENV])).toBe(cluster.postgres.crmDatabase);
    const setup = compose.services['temporal-schema-setup']?.command?.join('\n') ?? '';
    expect(setup).toMatch(
      new RegExp(`for db in ${cluster.postgres.storeDatabase} ${cluster.postgres.crmDatabase}; do`),
    );
  });
});
