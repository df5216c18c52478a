/**
 * The cluster itself (issue 16, done-when): `npm run cluster`'s up/down with a data dir and ports
 * of the test's own (never a developer's cluster), a job through the per-stage workers, the
 * Temporal server restarted once while the job waits on its write, and exactly one write in the
 * CRM database. The binaries come from the per-user cache (docs/cluster.md; the first build,
 * without a cache, takes about 10 minutes and needs Go).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writerTaskQueue } from '../../contracts';
import { loadConfig } from '../../src/config';
import { ensureClusterBinaries, type ClusterBinaries } from '../../src/devtools/cluster/binaries';
import { clusterDown, clusterUp, takenPort } from '../../src/devtools/cluster/lifecycle';
import { stopDaemon } from '../../src/devtools/cluster/processes';
import { clusterEnv, clusterSettings, crmUrl, frontendAddress, storeUrl, type ClusterPorts } from '../../src/devtools/cluster/settings';
import { prepareNamespace, startTemporalServer } from '../../src/devtools/cluster/temporal-server';
import { startWorker, workerEnv } from '../../src/devtools/cluster/workers';
import { onPath } from '../../src/devtools/tool-cache';
import { startJob } from '../../src/operator/client';
import { openStore, type Store } from '../../src/worker/store';
import { jobRequest } from '../helpers/rail';

/** Off the default cluster (5433/7333/8333) and the dev server; the server's other ports move by
 * the same offset (frontend - 7233 = 2100: 9033-9039, 9333-9343, 10036, 10100). */
const PORTS: ClusterPorts = { postgres: 5533, frontend: 9333, ui: 9433 };

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'handrail-cluster-it-'));
// mkdtemp makes it 0700; run as root, PostgreSQL runs as `postgres`, who must reach its data dir below.
fs.chmodSync(tmp, 0o755);
const s = clusterSettings(loadConfig({ HANDRAIL_DATA_DIR: tmp }), PORTS);
const [general, writer] = s.workers as [(typeof s.workers)[number], (typeof s.workers)[number]];
const log = (msg: string) => console.log(`[cluster-it] ${msg}`);
const since = (t: number) => `${((Date.now() - t) / 1000).toFixed(1)} s`;

let skip: string | null = null;
let client: Client | undefined;
let store: Store | undefined;
let crm: Store | undefined;
let bins: ClusterBinaries;
const timings: Record<string, string> = {};

beforeAll(async () => {
  const started = Date.now();
  try {
    bins = ensureClusterBinaries(process.env, log);
  } catch (err) {
    if (onPath('go', process.env)) throw err;
    skip = (err as Error).message;
    return;
  }
  const taken = await takenPort(s, bins);
  // Someone else's cluster (or anything) there: never touch it.
  skip = taken === undefined ? null : `port ${s.host}:${taken} is taken; this test's cluster needs its ports`;
  if (skip) return;
  await clusterUp(s, log);
  timings.up = since(started);
  client = new Client({ connection: await Connection.connect({ address: frontendAddress(s) }), namespace: s.namespace });
  store = await openStore({ databaseUrl: storeUrl(s) });
  crm = await openStore({ databaseUrl: crmUrl(s) });
}, 20 * 60_000);

afterAll(async () => {
  await client?.connection.close();
  await store?.close();
  await crm?.close();
  const started = Date.now();
  if (!skip) await clusterDown(s, log);
  timings.down = since(started);
  log(`timings: ${JSON.stringify(timings)}`);
  fs.rmSync(tmp, { recursive: true, force: true });
}, 120_000);

describe('npm run cluster, on its own ports and data dir', () => {
  it('runs a job through the general worker and the writer, survives a server restart while the write waits, and writes once', async (ctx) => {
    if (skip) ctx.skip(skip);
    const started = Date.now();
    // The writer is down while the job reaches its write, so the restart is surely mid-job.
    await stopDaemon(writer);
    const request = jobRequest();
    const { handle } = await startJob(client!, request, s);
    const deadline = Date.now() + 60_000;
    const writeScheduled = async () =>
      ((await handle.fetchHistory()).events ?? []).some((e) => e.activityTaskScheduledEventAttributes?.taskQueue?.name === writerTaskQueue(s.taskQueue));
    while (!(await writeScheduled())) {
      if (Date.now() > deadline) throw new Error('the job never scheduled its write');
      await new Promise((r) => setTimeout(r, 250));
    }
    timings.toWrite = since(started);

    const restart = Date.now();
    const stopped = await stopDaemon(s.server);
    const restarted = startTemporalServer(s, bins);
    expect(restarted).not.toBe(stopped);
    await prepareNamespace(s, log);
    timings.serverRestart = since(restart);
    // Within the writer's ACK timeout (1 min, then once more): the job waited, nothing escalated.
    await startWorker(writer, workerEnv(clusterEnv(s), writer));
    const result = await handle.result();
    timings.job = since(started);

    expect(result.status).toBe('completed');
    expect(result.acks.map((a) => `${a.stage}:${a.ack}`)).not.toContain('writeback:target_unavailable');
    expect(await crm!.listWrites(request.job_id)).toHaveLength(1);
    expect((await crm!.getCrmTicket(request.ticket.id))?.revision).toBe(1);
    expect(await store!.listWrites(request.job_id)).toHaveLength(0);
    // The general worker rode out the restart: it ran the workflow to the end.
    expect(fs.readFileSync(general.logFile, 'utf8')).toMatch(/role general.*no CRM/);
  }, 240_000);
});
