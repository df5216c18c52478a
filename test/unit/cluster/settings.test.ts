import { describe, expect, it } from 'vitest';
import { clusterEnv, clusterSettings } from '../../../src/devtools/cluster/settings';
import { statusTable } from '../../../src/devtools/cluster/status';
import { workerEnv } from '../../../src/devtools/cluster/workers';
import { loadConfig } from '../../../src/config';

describe('cluster settings', () => {
  const s = clusterSettings(loadConfig({ HANDRAIL_DATA_DIR: '/d', TEMPORAL_NAMESPACE: 'ns' }));

  it('keeps everything under <dataDir>/cluster, one pid and log per process', () => {
    expect(s.root).toBe('/d/cluster');
    expect(s.postgres.root).toBe('/d/cluster/postgres');
    expect(s.server).toMatchObject({
      pidFile: '/d/cluster/temporal-server.pid',
      logFile: '/d/cluster/temporal-server.log',
      configDir: '/d/cluster/config',
    });
    expect(s.ui).toMatchObject({ pidFile: '/d/cluster/ui-server.pid', root: '/d/cluster/ui-server' });
    expect(s.workers.map((w) => [w.name, w.pidFile, w.logFile])).toEqual([
      ['worker', '/d/cluster/worker.pid', '/d/cluster/worker.log'],
      ['writer', '/d/cluster/writer.pid', '/d/cluster/writer.log'],
    ]);
  });

  it('uses fixed ports off the dev server, the frontend 100 above the template; a test can pass its own', () => {
    expect([s.postgres.port, s.server.frontendPort, s.server.portOffset, s.ui.port]).toEqual([5433, 7333, 100, 8333]);
    const other = clusterSettings(loadConfig({ HANDRAIL_DATA_DIR: '/t' }), {
      postgres: 5533,
      frontend: 9333,
      ui: 9433,
    });
    expect([
      other.root,
      other.postgres.port,
      other.server.frontendPort,
      other.server.portOffset,
      other.ui.port,
    ]).toEqual(['/t/cluster', 5533, 9333, 2100, 9433]);
    expect(other.workers[1]!.env.HANDRAIL_CRM_DATABASE_URL).toBe('postgresql://temporal@127.0.0.1:5533/crm');
  });

  it("splits the workers: general on the job queue with no CRM URL, the writer on the writers' queue with the crm database", () => {
    expect(s.workers.map((w) => [w.name, w.role, w.taskQueues, w.env])).toEqual([
      ['worker', 'general', ['handrail'], { HANDRAIL_WORKER_ROLE: 'general' }],
      [
        'writer',
        'writer',
        ['handrail-writer'],
        { HANDRAIL_WORKER_ROLE: 'writer', HANDRAIL_CRM_DATABASE_URL: 'postgresql://temporal@127.0.0.1:5433/crm' },
      ],
    ]);
    // A CRM URL in the shell that runs `cluster up` never reaches the general worker.
    const parent = { PATH: '/bin', HANDRAIL_CRM_DATABASE_URL: 'postgresql://elsewhere/crm' };
    expect(workerEnv(clusterEnv(s), s.workers[0]!, parent)).not.toHaveProperty('HANDRAIL_CRM_DATABASE_URL');
    expect(workerEnv(clusterEnv(s), s.workers[1]!, parent).HANDRAIL_CRM_DATABASE_URL).toBe(
      'postgresql://temporal@127.0.0.1:5433/crm',
    );
  });

  it('gives the env the CLI and the worker read (src/config.ts), which round-trips through loadConfig', () => {
    const env = clusterEnv(s);
    expect(env).toEqual({
      TEMPORAL_ADDRESS: '127.0.0.1:7333',
      TEMPORAL_NAMESPACE: 'ns',
      HANDRAIL_TASK_QUEUE: 'handrail',
      HANDRAIL_WEB_UI_URL: 'http://127.0.0.1:8333',
      DATABASE_URL: 'postgresql://temporal@127.0.0.1:5433/handrail',
    });
    expect(loadConfig(env)).toMatchObject({
      temporalAddress: '127.0.0.1:7333',
      namespace: 'ns',
      webUiUrl: 'http://127.0.0.1:8333',
      databaseUrl: env.DATABASE_URL,
    });
  });
});

describe('statusTable', () => {
  it('aligns the columns and tells down from not answering', () => {
    const table = statusTable([
      { part: 'postgresql', address: '127.0.0.1:5433', up: true, pid: 12 },
      { part: 'temporal-server', address: '127.0.0.1:7333', up: false, pid: 345 },
      { part: 'worker', address: 'task queue handrail', up: false },
    ]);
    expect(table.split('\n')).toEqual([
      'PART             ADDRESS              STATE          PID',
      'postgresql       127.0.0.1:5433       up             12',
      'temporal-server  127.0.0.1:7333       not answering  345',
      'worker           task queue handrail  down           -',
    ]);
  });
});
