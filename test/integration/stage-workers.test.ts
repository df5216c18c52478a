/**
 * Per-stage workers with credential isolation, as real processes on the suite's
 * dev server: the cluster's two worker specs (settings.clusterWorkers), the general one started
 * alone. Its process holds no CRM URL, registers no writer, so a job reaching writeback is not
 * picked up: the ACK timeout (tried once more, no fallback) sends it back to the judge, who
 * escalates, with nothing written. Then the writer comes up, a human approves, and the job
 * completes with one write, in the CRM's own database and not in the store's.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { writebackStage } from '../../contracts/pipelines/ticket-triage';
import { writerTaskQueue } from '../../contracts';
import { CRM_DATABASE_URL_ENV } from '../../src/config';
import { stopDaemon } from '../../src/devtools/cluster/processes';
import { clusterWorkers, type DaemonFiles, type WorkerSpec } from '../../src/devtools/cluster/settings';
import { startWorker, workerEnv } from '../../src/devtools/cluster/workers';
import { ensureDatabase } from '../../src/devtools/postgres-server';
import { startDevPostgres, type DevPostgres } from '../../src/devtools/pg-dev';
import { decide, startJob } from '../../src/operator/client';
import { openStore, type Store } from '../../src/worker/store';
import { jobRequest, stageActivities, uniqueId, waitForStatus } from '../helpers/rail';
import { postgresUnavailable } from '../helpers/store-backends';

const pgSkip = postgresUnavailable();
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'handrail-stage-workers-'));
const taskQueue = uniqueId('split');
let postgres: DevPostgres;
let client: Client;
let store: Store;
let crm: Store;
let general: WorkerSpec & DaemonFiles;
let writer: WorkerSpec & DaemonFiles;

/** A process's environment as the kernel has it (what it could read, whatever it logs). */
const environOf = (pid: number): Record<string, string> =>
  Object.fromEntries(
    fs
      .readFileSync(`/proc/${pid}/environ`, 'utf8')
      .split('\0')
      .filter(Boolean)
      .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
  );

async function start(worker: WorkerSpec & DaemonFiles): Promise<number> {
  const connect = {
    TEMPORAL_ADDRESS: inject('temporalAddress'),
    TEMPORAL_NAMESPACE: inject('namespace'),
    HANDRAIL_TASK_QUEUE: taskQueue,
    DATABASE_URL: postgres.url,
    HANDRAIL_DATA_DIR: tmp,
  };
  // The test runner's own env may name a CRM: the general worker must not inherit it.
  return startWorker(
    worker,
    workerEnv(connect, worker, { ...process.env, [CRM_DATABASE_URL_ENV]: 'postgresql://leaked@127.0.0.1:1/crm' }),
  );
}

beforeAll(async () => {
  if (pgSkip) return;
  postgres = await startDevPostgres();
  const admin = new pg.Client({ connectionString: postgres.url });
  await admin.connect();
  await ensureDatabase(admin, 'crm').finally(() => admin.end());
  const crmUrl = postgres.url.replace(/\/[^/]+$/, '/crm');
  [general, writer] = clusterWorkers(taskQueue, crmUrl).map((w) => ({
    ...w,
    pidFile: path.join(tmp, `${w.name}.pid`),
    logFile: path.join(tmp, `${w.name}.log`),
  })) as [WorkerSpec & DaemonFiles, WorkerSpec & DaemonFiles];
  store = await openStore({ databaseUrl: postgres.url });
  crm = await openStore({ databaseUrl: crmUrl });
  client = new Client({
    connection: await Connection.connect({ address: inject('temporalAddress') }),
    namespace: inject('namespace'),
  });
});

afterAll(async () => {
  for (const w of [writer, general]) if (w) await stopDaemon(w);
  await client?.connection.close();
  await store?.close();
  await crm?.close();
  await postgres?.stop();
  fs.rmSync(tmp, { recursive: true, force: true });
});

describe.skipIf(pgSkip)(`per-stage workers as processes${pgSkip ? ` (skipped: ${pgSkip})` : ''}`, () => {
  it('general alone: writeback times out unpicked and escalates with nothing written; the writer comes up, approve, one write in the CRM database', async () => {
    const generalPid = await start(general);
    expect(environOf(generalPid)).toMatchObject({ HANDRAIL_WORKER_ROLE: 'general', HANDRAIL_TASK_QUEUE: taskQueue });
    expect(environOf(generalPid)).not.toHaveProperty(CRM_DATABASE_URL_ENV);
    expect(fs.readFileSync(general.logFile, 'utf8')).toMatch(
      new RegExp(`polling "${taskQueue}" on .*role general.*no writers`),
    );

    const request = jobRequest();
    const { handle } = await startJob(client, request, { taskQueue });
    const waiting = await waitForStatus(handle, 'escalated', 200_000);
    expect(waiting.escalation?.blocked).toBe('writeback');
    expect(waiting.escalation?.reasons.join(' ')).toMatch(
      new RegExp(
        `stage unavailable: no "writeback" worker picked the hop up within ${writebackStage.activity.scheduleToStartTimeout} on task queue "${writerTaskQueue(taskQueue)}"`,
      ),
    );
    const acks = (await handle.query<{ stage: string; ack: string }[]>('acks')).map((a) => `${a.stage}:${a.ack}`);
    expect(acks.slice(-2)).toEqual(['writeback:target_unavailable', 'human:accepted']);
    // Tried on the writers' queue twice (the ACK timeout's one retry), by nobody.
    const history = await handle.fetchHistory();
    const writebacks = (history.events ?? []).filter(
      (e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'writeback',
    );
    expect(writebacks.map((e) => e.activityTaskScheduledEventAttributes?.taskQueue?.name)).toEqual([
      writerTaskQueue(taskQueue),
      writerTaskQueue(taskQueue),
    ]);
    expect((history.events ?? []).filter((e) => e.activityTaskTimedOutEventAttributes)).toHaveLength(2);
    expect(await crm.listWrites(request.job_id)).toHaveLength(0);
    expect(await crm.getCrmTicket(request.ticket.id)).toBeNull();

    const writerPid = await start(writer);
    expect(environOf(writerPid)[CRM_DATABASE_URL_ENV]).toBe(writer.env[CRM_DATABASE_URL_ENV]);
    expect(fs.readFileSync(writer.logFile, 'utf8')).toMatch(
      new RegExp(`polling "${writerTaskQueue(taskQueue)}" on .*role writer.*writes on their own database`),
    );
    await decide(client, request.job_id, { action: 'approve', actor: 'ops.lead', note: 'the writer worker is up' });
    const result = await handle.result();

    expect(result.status).toBe('completed');
    expect(await stageActivities(client, request.job_id)).toEqual(
      expect.arrayContaining(['intake', 'retrieve', 'draft', 'judge', 'writeback']),
    );
    expect(await crm.listWrites(request.job_id)).toHaveLength(1);
    expect((await crm.getCrmTicket(request.ticket.id))?.revision).toBe(1);
    expect(result.receipt?.reference).toBe(`crm_tickets/${request.ticket.id}`);
    // The store's own CRM tables stay empty: the general side never wrote, the writer wrote elsewhere.
    expect(await store.listWrites(request.job_id)).toHaveLength(0);
  }, 300_000);
});
