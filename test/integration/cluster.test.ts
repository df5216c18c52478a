/**
 * The cluster itself: `npm run cluster`'s up/down with a data dir and ports
 * of the test's own (never a developer's cluster), a job through the per-stage workers, the
 * Temporal server restarted once while the job waits on its write, and exactly one write in the
 * CRM database. Then, on the same cluster, a workflow change rolled out with patched(): two worker
 * builds on one task queue during a rolling restart (docs/cluster.md "Rolling out workflow changes").
 * The binaries come from the per-user cache (docs/cluster.md; the first build, without a cache,
 * takes about 10 minutes and needs Go).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection, WorkflowUpdateStage } from '@temporalio/client';
import type { History } from '@temporalio/common/lib/proto-utils';
import { temporal } from '@temporalio/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writerTaskQueue, type JobRequest } from '../../contracts';
import { loadConfig, codeRoot } from '../../src/config';
import { ensureClusterBinaries, type ClusterBinaries } from '../../src/devtools/cluster/binaries';
import { clusterDown, clusterUp, takenPort } from '../../src/devtools/cluster/lifecycle';
import { stopDaemon } from '../../src/devtools/cluster/processes';
import {
  clusterEnv,
  clusterSettings,
  crmUrl,
  frontendAddress,
  storeUrl,
  type ClusterPorts,
} from '../../src/devtools/cluster/settings';
import { prepareNamespace, startTemporalServer } from '../../src/devtools/cluster/temporal-server';
import { startWorker, workerEnv } from '../../src/devtools/cluster/workers';
import { onPath } from '../../src/devtools/tool-cache';
import { decide, startJob } from '../../src/operator/client';
import { bundleWorkflows, jobSources, replayHistories, type ReplayOutcome } from '../../src/replay';
import { openStore, type Store } from '../../src/worker/store';
import { decideUpdate } from '../../workflows/definitions';
import { jobRequest, stageActivities, startRail, uniqueId, waitForStatus, type Rail } from '../helpers/rail';
import { rolloutV1Activities, rolloutV2Activities } from './fixtures/rollout/activities';
import { RERANK_PATCH, ROLLOUT_PIPELINE, rolloutV1, rolloutV2 } from './fixtures/rollout/pipelines';

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
  client = new Client({
    connection: await Connection.connect({ address: frontendAddress(s) }),
    namespace: s.namespace,
  });
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
      ((await handle.fetchHistory()).events ?? []).some(
        (e) => e.activityTaskScheduledEventAttributes?.taskQueue?.name === writerTaskQueue(s.taskQueue),
      );
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
    expect(fs.readFileSync(general.logFile, 'utf8')).toMatch(/role general.*no writers/);
  }, 240_000);
});

/** The patch ids a history's markers record (sdk-core's `core_patch` markers). */
function patchMarkers(history: History): string[] {
  return (history.events ?? [])
    .map((e) => e.markerRecordedEventAttributes)
    .filter((m) => m?.markerName === 'core_patch')
    .map(
      (m) =>
        (JSON.parse(Buffer.from(m!.details!['patch-data']!.payloads![0]!.data!).toString('utf8')) as { id: string }).id,
    );
}

/** The build id of each completed workflow task, in order: which build ran which part of the job. */
function taskBuilds(history: History): string[] {
  return (history.events ?? [])
    .filter((e) => e.workflowTaskCompletedEventAttributes)
    .map((e) => e.workflowTaskCompletedEventAttributes!.workerVersion?.buildId ?? '');
}

const replayOn = async (
  client: Client,
  jobIds: string[],
  workflowBundle: { code: string },
): Promise<ReplayOutcome[]> => {
  const outcomes: ReplayOutcome[] = [];
  for await (const o of replayHistories(jobSources(client, jobIds), { workflowBundle })) outcomes.push(o);
  return outcomes;
};

describe('rolling out a workflow change with patched(): two builds on one task queue', () => {
  it('jobs started on build v1 finish on v2 down the old path; new jobs take the new one; a new-path task on v1 fails and waits for v2', async (ctx) => {
    if (skip) ctx.skip(skip);
    const started = Date.now();
    const fixtures = path.join(codeRoot, 'test', 'integration', 'fixtures', 'rollout');
    const [bundleV1, bundleV2] = await Promise.all([
      bundleWorkflows(path.join(fixtures, 'build-v1.ts')),
      bundleWorkflows(path.join(fixtures, 'build-v2.ts')),
    ]);
    timings.rolloutBundles = since(started);
    const taskQueue = uniqueId('rollout');
    const v1Build = () =>
      startRail({
        address: frontendAddress(s),
        taskQueue,
        store,
        workflowBundle: bundleV1,
        pipelines: [rolloutV1],
        stageActivities: rolloutV1Activities,
      });
    const v2Build = () =>
      startRail({
        address: frontendAddress(s),
        taskQueue,
        store,
        workflowBundle: bundleV2,
        pipelines: [rolloutV2],
        stageActivities: rolloutV2Activities,
      });
    const buildId = (rail: Rail) => rail.workers[0]!.options.buildId;
    const approve = { action: 'approve', actor: 'ops.lead', note: 'fine to write' } as const;
    // The hop cap (3) stops a v1 job before writeback and a v2 job (one hop more) before judge:
    // both wait for a human, past the patch's route.
    const capped = () => jobRequest({ pipeline: ROLLOUT_PIPELINE, max_hops: 3 });
    const begin = async (request: JobRequest) => (await startJob(client!, request, { taskQueue })).handle;

    let v1: Rail | undefined = await v1Build();
    let v2: Rail | undefined;
    try {
      const idV1 = buildId(v1);
      const old = [capped(), capped()];
      const oldHandles = await Promise.all(old.map(begin));
      await Promise.all(oldHandles.map((h) => waitForStatus(h, 'escalated')));
      timings.rolloutOldMidRun = since(started);

      // The rolling restart: v2 joins the queue, both poll; then v1 drains and stops.
      v2 = await v2Build();
      const idV2 = buildId(v2);
      expect(idV2).not.toBe(idV1);
      // Started while both poll: either build may decide its route, and any task of a new-path job
      // that v1 picks up fails until v2 takes it; it completes either way.
      const overlap = jobRequest({ pipeline: ROLLOUT_PIPELINE });
      const overlapHandle = await begin(overlap);
      await v1.stop();
      v1 = undefined;
      timings.rolloutDrained = since(started);

      // From here on only v2 polls: the old jobs finish, new ones start (one to be stranded below).
      const fresh = jobRequest({ pipeline: ROLLOUT_PIPELINE });
      const stuck = capped();
      const [freshHandle, stuckHandle] = await Promise.all([begin(fresh), begin(stuck)]);
      const oldResults = await Promise.all(
        oldHandles.map(async (h, i) => (await decide(client!, old[i]!.job_id, approve), h.result())),
      );
      for (const [i, h] of oldHandles.entries()) {
        expect(oldResults[i]!.status).toBe('completed');
        const history = await h.fetchHistory();
        // Replayed on v2 past the patch's route: patched() was false, no marker, no rerank (the
        // rail's own patches were there from the start).
        expect(patchMarkers(history)).not.toContain(RERANK_PATCH);
        expect(await stageActivities(client!, old[i]!.job_id)).toEqual([
          'intake',
          'retrieve',
          'draft',
          'judge',
          'writeback',
        ]);
        const builds = taskBuilds(history);
        expect(builds[0]).toBe(idV1);
        expect(builds.at(-1)).toBe(idV2);
      }
      expect((await overlapHandle.result()).status).toBe('completed');
      const overlapStages = await stageActivities(client!, overlap.job_id);
      expect(overlapStages.includes('rerank')).toBe(
        patchMarkers(await overlapHandle.fetchHistory()).includes(RERANK_PATCH),
      );
      log(`the job started during the overlap took the ${overlapStages.includes('rerank') ? 'new' : 'old'} path`);

      // After the drain every job takes the new path.
      const freshResult = await freshHandle.result();
      expect(freshResult.status).toBe('completed');
      expect(freshResult.package.hop?.chain).toEqual([
        'client',
        'intake',
        'retrieve',
        'rerank',
        'draft',
        'judge',
        'writeback',
      ]);
      const freshHistory = await freshHandle.fetchHistory();
      expect(patchMarkers(freshHistory)).toContain(RERANK_PATCH);
      expect(new Set(taskBuilds(freshHistory))).toEqual(new Set([idV2]));
      expect(await crm!.listWrites(fresh.job_id)).toHaveLength(0);
      expect(await store!.listWrites(fresh.job_id)).toHaveLength(1);
      await waitForStatus(stuckHandle, 'escalated');
      timings.rolloutOldDone = since(started);

      // `handrail replay` before the rollout: every v1 job replays on v2; a new-path job does not replay on v1.
      expect(
        (await replayOn(client!, [...old.map((r) => r.job_id), overlap.job_id], bundleV2)).filter((o) => !o.ok),
      ).toEqual([]);
      const onV1 = await replayOn(client!, [fresh.job_id], bundleV1);
      expect(onV1[0]).toMatchObject({ ok: false, error: 'DeterminismViolationError' });

      // A new-path job whose next task reaches v1 (a v1 left running, or a rollback): the task
      // fails on v1 and is retried; nothing of the job is lost, and v2 finishes it.
      await v2.stop();
      v2 = undefined;
      v1 = await v1Build();
      const accepted = stuckHandle.startUpdate(decideUpdate, {
        args: [approve],
        waitForStage: WorkflowUpdateStage.ACCEPTED,
      });
      const failedTask = async () =>
        (await stuckHandle.fetchHistory()).events?.find(
          (e) =>
            e.workflowTaskFailedEventAttributes?.cause ===
            temporal.api.enums.v1.WorkflowTaskFailedCause.WORKFLOW_TASK_FAILED_CAUSE_NON_DETERMINISTIC_ERROR,
        );
      const deadline = Date.now() + 30_000;
      while (!(await failedTask())) {
        if (Date.now() > deadline) throw new Error("v1 never failed the new-path job's task");
        await new Promise((r) => setTimeout(r, 250));
      }
      log(`on v1: ${(await failedTask())!.workflowTaskFailedEventAttributes!.failure!.message!}`);
      await v1.stop();
      v1 = undefined;
      v2 = await v2Build();
      await (await accepted).result();
      const stuckResult = await stuckHandle.result();
      expect(stuckResult.status).toBe('completed');
      expect(stuckResult.package.hop?.chain).toContain('rerank');
      expect(await store!.listWrites(stuck.job_id)).toHaveLength(1);
      const failedTasks = (await stuckHandle.fetchHistory()).events?.filter(
        (e) => e.workflowTaskFailedEventAttributes,
      ).length;
      log(`the stranded job's history holds ${failedTasks} failed workflow task(s)`);
      timings.rollout = since(started);
    } finally {
      await v1?.stop();
      await v2?.stop();
    }
  }, 240_000);
});
