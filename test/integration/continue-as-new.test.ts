/**
 * Continue-as-new on the dev server: a long job hands itself to a new run (same job id, same
 * queries and update) before Temporal's limits, with nothing lost or paid twice. The thresholds
 * are the request's `continue_after`, set low so a short job continues several times.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Client } from '@temporalio/client';
import { relentingJudge } from '../../bench/long-jobs/activities';
import { startJob } from '../../src/operator/client';
import { followJob, type JobEvent } from '../../src/client';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openStore, type Store } from '../../src/worker/store';
import { decideUpdate, statusQuery } from '../../workflows/definitions';
import { jobRequest, startRail, until, type Rail } from '../helpers/rail';

let rail: Rail;
let store: Store;
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'handrail-continue-'));
/** Failing verdicts each job still gets before its judge passes the draft. */
const failuresLeft = new Map<string, number>();

beforeAll(async () => {
  store = await openStore({ databaseUrl: process.env.DATABASE_URL, dataDir });
  rail = await startRail({ store, activities: () => ({ judge: relentingJudge(store, failuresLeft) }) });
});
afterAll(async () => {
  await rail?.stop();
  await store?.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

/** The runs of a job id, oldest first, as visibility lists them once the last has closed. */
async function runChain(client: Client, jobId: string, want: number): Promise<string[]> {
  let runs: string[] = [];
  await until(`${want} runs of ${jobId}`, async () => {
    runs = [];
    for await (const run of client.workflow.list({ query: `WorkflowId = "${jobId}"` }))
      runs.push(`${run.runId}:${run.status.name}`);
    return runs.length >= want;
  });
  return runs.reverse();
}

it('a job a human sends back many times continues as new every few decisions and completes with one write', async () => {
  const decisions = 20;
  const request = jobRequest({ budget: { usd: 5, revisions: 0 }, continue_after: { updates: 3 } });
  failuresLeft.set(request.job_id, decisions + 1);
  const { handle } = await startJob(rail.client, request, rail);
  const job = rail.client.workflow.getHandle(request.job_id);
  // Each decision sends the work on (at least one hop) before the job can escalate again; until
  // the job takes it up, the status still says escalated, so wait for a later escalation.
  let hops = -1;
  const nextEscalation = async () => {
    await until(`a new escalation of ${request.job_id} after hop ${hops}`, async () => {
      const view = await job.query(statusQuery);
      if (view.status !== 'escalated' || view.hops <= hops) return false;
      hops = view.hops;
      return true;
    });
  };
  for (let i = 1; i <= decisions; i++) {
    await nextEscalation();
    await job.executeUpdate(decideUpdate, {
      args: [{ action: 'revise', actor: 'reviewer', note: `try again (${i})` }],
    });
  }
  await nextEscalation();
  await job.executeUpdate(decideUpdate, { args: [{ action: 'revise', actor: 'reviewer', note: 'last try' }] });
  const result = await handle.result();
  expect(result.status).toBe('completed');
  expect(await rail.store.listWrites(request.job_id)).toHaveLength(1);
  // 21 decisions, three a run: the job ran in 7 runs and then one that completed.
  const runs = await runChain(rail.client, request.job_id, 8);
  console.log(`run chain of ${request.job_id}: ${runs.join(' → ')}`);
  expect(runs.slice(0, -1).every((r) => r.endsWith(':CONTINUED_AS_NEW'))).toBe(true);
  expect(runs.at(-1)).toMatch(/:COMPLETED$/);
  // Every decision is on the record once, and the wallet paid each hop once: spent is the sum of
  // the hops' costs, and the wallet holds the rest.
  const view = await job.query(statusQuery);
  expect(
    result.acks.filter((a) => a.stage === 'human' && a.reason.startsWith('decided revise by reviewer')),
  ).toHaveLength(decisions + 1);
  expect(result.package.budget.usd_remaining).toBeCloseTo(request.budget.usd - result.spent_usd, 6);
  expect(result.hops).toBe(result.package.hop!.count);
  expect(result.acks.filter((a) => a.stage === 'human').length).toBe(2 * (decisions + 1));
  expect(view.runs).toBe(8);
});

it('a long critique loop continues as new on its history length and completes with one write', async () => {
  const request = jobRequest({ budget: { usd: 5, revisions: 30 }, max_hops: 100, continue_after: { events: 120 } });
  failuresLeft.set(request.job_id, 25);
  const { handle } = await startJob(rail.client, request, rail);
  const result = await handle.result();
  expect(result.status).toBe('completed');
  expect(result.hops).toBe(4 + 2 * 25);
  expect(result.package.budget.revisions_remaining).toBe(5);
  expect(await rail.store.listWrites(request.job_id)).toHaveLength(1);
  const runs = await runChain(rail.client, request.job_id, 2);
  console.log(`run chain of ${request.job_id}: ${runs.join(' → ')}`);
  expect(runs.length).toBeGreaterThan(1);
  expect(runs.at(-1)).toMatch(/:COMPLETED$/);
  expect(result.acks.map((a) => a.stage).filter((s) => s === 'writeback')).toEqual(['writeback']);
  // The result counts the runs, and a follower of the finished job reads each new run once, in order.
  expect(result.runs).toBe(runs.length);
  const events: JobEvent[] = [];
  for await (const item of followJob(rail.client, request.job_id, { store }))
    if (item.kind === 'event') events.push(item.event);
  const continued = events.flatMap((e) => (e.type === 'job_continued' ? [e.run] : []));
  expect(continued).toEqual(Array.from({ length: runs.length - 1 }, (_, i) => i + 2));
  const ids = events.map((e) => e.id);
  expect(ids).toEqual([...new Set(ids)].sort((a, b) => a - b));
  expect(events.at(-1)).toMatchObject({ type: 'job_finished', status: 'completed' });
});
