/**
 * The hub with parallel specialists on the dev server (pipeline `ticket-hub`): after intake,
 * `policy` and `account` run at once under reservations from one wallet, the rail merges them
 * into one record keyed job_id:merge:context.v1, then brief → judge → writeback.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { cancelled, heartbeat, sleep } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { MergeWork } from '../../activities/merge';
import { readLog } from '../../activities/transcript-log';
import { readSummarySegments } from '../../activities/summary';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AckRecord, type JobResult, type StageResult, type StageWork } from '../../contracts';
import { branchesOverlapped } from '../../bench/history';
import { statusQuery, type JobStatusView } from '../../workflows/definitions';
import { cancelJob, decide, startJob } from '../../src/operator/client';
import { openStore, type Store } from '../../src/worker/store';
import { jobRequest, startRail, stageActivities, waitForStatus, type Rail } from '../helpers/rail';

let rail: Rail;
let store: Store;
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'handrail-hub-'));
/** Jobs whose `account` stage misbehaves, by job id (the other jobs get the real stage). */
const accountBehaviour = new Map<string, 'overspend' | 'hang'>();
/** Jobs whose first merge fails (the store refusing, say), by job id. */
const failFirstMerge = new Set<string>();

beforeAll(async () => {
  store = await openStore({ databaseUrl: process.env.DATABASE_URL, dataDir });
  rail = await startRail({
    store,
    activities: (real) => ({
      account: async (work: StageWork): Promise<StageResult> => {
        const behaviour = accountBehaviour.get(work.package.job_id);
        if (behaviour === 'hang') {
          // Works until the job is cancelled (heartbeats carry the cancellation to it).
          for (;;) {
            heartbeat();
            await Promise.race([sleep(200), cancelled()]);
          }
        }
        const result = await real.account(work);
        // A stage that reports far more than its card's worst case (worstCaseCostUsd 0.002).
        return behaviour === 'overspend' ? { ...result, cost_usd: 0.5 } : result;
      },
      mergeBranches: async (work: MergeWork): Promise<StageResult> => {
        if (failFirstMerge.delete(work.package.job_id))
          throw ApplicationFailure.nonRetryable('the store refused the merge record', 'StoreUnavailable');
        return real.mergeBranches(work);
      },
    }),
  });
});
afterAll(async () => {
  await rail?.stop();
  await store?.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

const hubJob = (over: Parameters<typeof jobRequest>[0] = {}) => jobRequest({ pipeline: 'ticket-hub', ...over });
const labels = (acks: readonly AckRecord[]) => acks.map((a) => `${a.stage}:${a.ack}`);
const settledTotal = (acks: readonly AckRecord[]) =>
  Math.round(acks.reduce((sum, a) => sum + (a.settled_usd ?? 0), 0) * 1e6) / 1e6;

describe('hub with parallel specialists', () => {
  it('runs the specialists at once, merges them into one record, and completes', async () => {
    const request = hubJob();
    const { handle } = await startJob(rail.client, request, rail);
    const result: JobResult = await handle.result();
    expect(result.status).toBe('completed');
    // Branch acks read in fan-out order, whichever branch finished first.
    expect(labels(result.acks)).toEqual([
      'intake:accepted',
      'policy:accepted',
      'account:accepted',
      'merge:accepted',
      'brief:accepted',
      'judge:accepted',
      'writeback:accepted',
    ]);

    // Both branches were scheduled before either completed: they ran at once.
    expect(branchesOverlapped(await handle.fetchHistory(), 'policy', 'account')).toBe(true);

    // One merge record, and the package carries its artifact.
    const record = await store.findStageRecord(`${request.job_id}:merge:context.v1`);
    expect(record?.result.artifact.type).toBe('context.v1');
    expect(result.package.artifacts.map((a) => a.type)).toContain('context.v1');
    expect(result.package.artifacts.find((a) => a.type === 'context.v1')).toEqual(record!.result.artifact);
    expect((await stageActivities(rail.client, request.job_id)).filter((n) => n === 'mergeBranches')).toHaveLength(1);

    // Each hop reserved its card's worst case and settled what it spent; the wallet paid exactly that.
    const policyAck = result.acks.find((a) => a.stage === 'policy')!;
    expect(policyAck).toMatchObject({ reserved_usd: 0.004, settled_usd: 0.002 });
    expect(result.spent_usd).toBeCloseTo(settledTotal(result.acks), 9);
    expect(result.package.budget.usd_remaining).toBeCloseTo(1 - result.spent_usd, 9);
    expect((await handle.query(statusQuery)).reserved_usd).toBe(0);

    // The accumulated summary: one segment per stage, the branches' in fan-out order (the merge adds
    // none of its own: its ack says what it merged), the oldest read back from the store.
    const segments = await readSummarySegments(store, result.package.summary);
    expect(segments.map((s) => s.split(':', 1)[0])).toEqual([
      'hop 0 intake → intake.v1',
      'hop 1 policy → chunks.v1',
      'hop 1 account → account_history.v1',
      'hop 3 brief → summary_md',
      'hop 4 judge → verdict.v1',
      'hop 5 writeback → receipt.v1',
    ]);

    // The job's log stays one line: the branches' turns joined in fan-out order, then the rest.
    const { turns } = await readLog(store, result.package, request.job_id);
    expect(turns.map((t) => t.stage)).toEqual(['intake', 'policy', 'account', 'brief', 'judge', 'writeback']);
  });

  it('a merge that fails escalates with every branch kept; approving merges again and the job completes', async () => {
    const request = hubJob();
    failFirstMerge.add(request.job_id);
    const { handle } = await startJob(rail.client, request, rail);
    const view = await waitForStatus(handle, 'escalated');
    expect(view.escalation).toMatchObject({
      blocked: 'merge',
      reasons: [
        expect.stringMatching(/^merge into context\.v1 failed: StoreUnavailable: the store refused the merge record/),
      ],
    });
    await decide(rail.client, request.job_id, { action: 'approve', actor: 'ops.lead' });
    const result: JobResult = await handle.result();
    expect(result.status).toBe('completed');
    const stages = await stageActivities(rail.client, request.job_id);
    expect(['policy', 'account', 'mergeBranches'].map((s) => stages.filter((n) => n === s).length)).toEqual([1, 1, 2]);
    expect(await store.findStageRecord(`${request.job_id}:merge:context.v1`)).not.toBeNull();
  });

  it('a branch whose reservation does not fit is refused before work; the hub escalates naming it, and a top-up runs only that branch', async () => {
    // After intake ($0.001) the wallet holds $0.005: policy reserves $0.004, account's $0.002 does not fit.
    const request = hubJob({ budget: { usd: 0.006, revisions: 1 } });
    const { handle } = await startJob(rail.client, request, rail);
    const view = await waitForStatus(handle, 'escalated');
    expect(view.escalation?.reasons[0]).toMatch(
      /^branch "account" of the fan-out after intake\.v1 did not answer: rejected_budget: wallet has \$0\.005 \(\$0\.004 reserved by running hops\); "account" reserves \$0\.002/,
    );
    expect(view.escalation?.blocked).toBe('account');
    expect(view.escalation?.options).toContain('top_up');
    expect(await stageActivities(rail.client, request.job_id)).toEqual(['intake', 'policy']);

    await decide(rail.client, request.job_id, { action: 'top_up', usd: 1, actor: 'ops.lead' });
    const result: JobResult = await handle.result();
    expect(result.status).toBe('completed');
    const stages = await stageActivities(rail.client, request.job_id);
    // The answered branch is kept: policy ran once, account once after the top-up, one merge.
    expect(stages.filter((s) => s === 'policy')).toHaveLength(1);
    expect(stages.filter((s) => s === 'account')).toHaveLength(1);
    expect(stages.filter((s) => s === 'mergeBranches')).toHaveLength(1);
    expect(result.spent_usd).toBeCloseTo(settledTotal(result.acks), 9);
    // The refused branch added no segment; its run after the top-up did, once, after policy's.
    const segments = await readSummarySegments(store, result.package.summary);
    expect(segments.map((s) => s.split(' → ', 1)[0]!.replace(/^hop \d+ /, ''))).toEqual([
      'intake',
      'policy',
      'account',
      'brief',
      'judge',
      'writeback',
    ]);
    // The human follows the branches at their hop, the re-run branch runs at it too, and the
    // chain lists each stage after the one it followed.
    expect(result.acks.map((a) => `${a.stage}:${a.ack}:${a.hop}`)).toEqual([
      'intake:accepted:0',
      'policy:accepted:1',
      'account:rejected_budget:1',
      'human:accepted:1',
      'human:accepted:1',
      'account:accepted:1',
      'merge:accepted:2',
      'brief:accepted:3',
      'judge:accepted:4',
      'writeback:accepted:5',
    ]);
    expect(result.package.hop?.chain).toEqual([
      'client',
      'intake',
      'policy',
      'human',
      'account',
      'merge',
      'brief',
      'judge',
      'writeback',
    ]);
  });

  it('a stage that reports more than its reservation is charged the reservation and the hop flagged overspent', async () => {
    const request = hubJob({ budget: { usd: 0.2, revisions: 1 } });
    accountBehaviour.set(request.job_id, 'overspend');
    const { handle } = await startJob(rail.client, request, rail);
    const result: JobResult = await handle.result();
    expect(result.status).toBe('completed');
    expect(result.acks.find((a) => a.stage === 'account')).toMatchObject({ reserved_usd: 0.002, settled_usd: 0.002 });
    expect(result.overspent_usd).toBeCloseTo(0.498, 9);
    expect(result.spent_usd).toBeCloseTo(settledTotal(result.acks), 9);
    expect(result.spent_usd).toBeLessThanOrEqual(0.2);
  });

  it('cancelling a job mid fan-out cancels its branches and releases every reservation', async () => {
    const request = hubJob();
    accountBehaviour.set(request.job_id, 'hang');
    const { handle } = await startJob(rail.client, request, rail);
    // While account works, the status shows what it holds.
    let view: JobStatusView;
    const deadline = Date.now() + 20_000;
    do {
      view = await handle.query(statusQuery);
      if (view.reservations.some((r) => r.stage === 'account')) break;
      await new Promise((r) => setTimeout(r, 100));
    } while (Date.now() < deadline);
    expect(view.reservations).toEqual(expect.arrayContaining([{ stage: 'account', hop: 1, usd: 0.002 }]));
    expect(view.reserved_usd).toBeGreaterThanOrEqual(0.002);
    await cancelJob(rail.client, request.job_id);
    const result: JobResult = await handle.result();
    expect(result.status).toBe('cancelled');
    const after = await handle.query(statusQuery);
    expect(after).toMatchObject({ reserved_usd: 0, reservations: [] });
    expect(labels(result.acks)).not.toContain('merge:accepted');
  });
});
