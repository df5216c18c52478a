import { describe, expect, it } from 'vitest';
import { clusterEnv, clusterSettings } from '../../../src/devtools/cluster/settings';
import { statusTable } from '../../../src/devtools/cluster/status';
import { loadConfig } from '../../../src/config';

describe('cluster settings', () => {
  const s = clusterSettings(loadConfig({ HANDRAIL_DATA_DIR: '/d', TEMPORAL_NAMESPACE: 'ns' }));

  it('keeps everything under <dataDir>/cluster, one pid and log per process', () => {
    expect(s.root).toBe('/d/cluster');
    expect(s.postgres.root).toBe('/d/cluster/postgres');
    expect(s.server).toMatchObject({ pidFile: '/d/cluster/temporal-server.pid', logFile: '/d/cluster/temporal-server.log', configDir: '/d/cluster/config' });
    expect(s.ui).toMatchObject({ pidFile: '/d/cluster/ui-server.pid', root: '/d/cluster/ui-server' });
    expect(s.workers.map((w) => [w.name, w.pidFile, w.logFile])).toEqual([['worker', '/d/cluster/worker.pid', '/d/cluster/worker.log']]);
  });

  it('uses fixed ports off the dev server, the frontend 100 above the template', () => {
    expect([s.postgres.port, s.server.frontendPort, s.server.portOffset, s.ui.port]).toEqual([5433, 7333, 100, 8333]);
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
    expect(loadConfig(env)).toMatchObject({ temporalAddress: '127.0.0.1:7333', namespace: 'ns', webUiUrl: 'http://127.0.0.1:8333', databaseUrl: env.DATABASE_URL });
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
