/**
 * Long jobs on the dev server, at a size that keeps the suite fast (`npm run long-jobs` runs them
 * at 500 decisions and 2,000 hops): a relay longer than the chain a package carries, and a job a
 * human sends on again and again, each continuing as new on low `continue_after` thresholds. The
 * package stays within its caps across runs (chain, artifacts), every superseded artifact stays
 * reachable through the snapshots the package points at, one write, every hop paid once.
 */
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { LIMITS, parseSnapshotUri, type HandoffV1, type JobRequest, type JobResult } from '../../contracts';
import { ticketTriageActivities } from '../../activities/ticket-triage';
import { relentingJudge } from '../../bench/long-jobs/activities';
import { runChain, sendOnByHuman } from '../../bench/long-jobs/jobs';
import { LONG_JOB_PIPELINES, longCritique } from '../../bench/long-jobs/pipeline';
import { codeRoot } from '../../src/config';
import { startJob } from '../../src/operator/client';
import { bundleRail } from '../../src/worker/bundle';
import { chainLength } from '../../workflows/rail/hop-chain';
import { jobRequest, startRail, type Rail } from '../helpers/rail';

let rail: Rail;
const failuresLeft = new Map<string, number>();

beforeAll(async () => {
  const bundle = await bundleRail(path.join(codeRoot, 'bench', 'long-jobs', 'workflows.ts'));
  rail = await startRail({
    workflowBundle: bundle,
    pipelines: LONG_JOB_PIPELINES,
    stageActivities: (deps) => ({
      ...ticketTriageActivities(deps, [longCritique]),
      judge: relentingJudge(deps.store, failuresLeft),
    }),
  });
});
afterAll(async () => {
  await rail?.stop();
});

/** Every artifact the job's package ever listed: the kept ones, and behind each fold's snapshot the
 * ones moved off, back to the first fold. */
async function allArtifacts(pkg: HandoffV1): Promise<string[]> {
  const uris = pkg.artifacts.map((a) => a.uri);
  let earlier = pkg.earlier_artifacts;
  while (earlier) {
    const content = await rail.store.getContent(parseSnapshotUri(earlier.snapshot)!.sha);
    expect(content, `snapshot ${earlier.snapshot} is stored`).not.toBeNull();
    const listed = JSON.parse(content!) as HandoffV1;
    uris.push(...listed.artifacts.map((a) => a.uri));
    earlier = listed.earlier_artifacts;
  }
  return [...new Set(uris)];
}

function expectWithinCaps(result: JobResult) {
  const { hop, artifacts } = result.package;
  expect(hop!.chain.length).toBeLessThanOrEqual(LIMITS.chain);
  expect(artifacts.length).toBeLessThanOrEqual(LIMITS.artifactsKept + 2);
  expect(result.acks.length).toBeLessThanOrEqual(LIMITS.acks);
}

async function expectOneWritePaidOnce(request: JobRequest, result: JobResult) {
  expect(result.status).toBe('completed');
  expect(await rail.store.listWrites(request.job_id)).toHaveLength(1);
  expect(result.acks.filter((a) => a.stage === 'writeback').map((a) => a.ack)).toEqual(['accepted']);
  expect(result.package.budget.usd_remaining).toBeCloseTo(request.budget.usd - result.spent_usd, 6);
}

it('a relay longer than the chain a package carries keeps its bounded revisit edge, continues as new and writes once', async () => {
  const rounds = 73;
  const request = jobRequest({
    pipeline: longCritique.name,
    max_hops: 200,
    budget: { usd: 20, revisions: 0 },
    continue_after: { events: 400 },
  });
  failuresLeft.set(request.job_id, rounds);
  const { handle } = await startJob(rail.client, request, rail);
  const result = await handle.result();

  await expectOneWritePaidOnce(request, result);
  expect(result.hops).toBe(4 + 2 * rounds);
  expectWithinCaps(result);
  // The whole chain counts: every delivery, human-free, and the drafter's edge taken each round.
  const hop = result.package.hop!;
  expect(chainLength(hop)).toBe(result.hops + 2);
  expect(hop.earlier?.stages).toEqual(['client', 'intake', 'retrieve', 'draft', 'judge']);
  expect(hop.earlier?.edges.find((e) => e.from === 'judge' && e.to === 'draft')?.times).toBeGreaterThan(0);
  // Superseded drafts and verdicts left the package; each one is still reachable.
  expect(result.package.earlier_artifacts?.count).toBeGreaterThan(0);
  const everything = await allArtifacts(result.package);
  expect(everything).toHaveLength(1 + 3 + 2 * (rounds + 1));
  const runs = await runChain(rail.client, request.job_id, request.continue_after);
  expect(runs.length).toBeGreaterThan(1);
  expect(runs.slice(0, -1).every((r) => r.status === 'CONTINUED_AS_NEW')).toBe(true);
  expect(runs.at(-1)?.status).toBe('COMPLETED');
});

it('a job a human sends on decision after decision continues as new, carries its bounded package and writes once', async () => {
  const decisions = 16;
  const request = jobRequest({ budget: { usd: 5, revisions: 0 }, continue_after: { updates: 5 } });
  failuresLeft.set(request.job_id, decisions);
  const { handle } = await startJob(rail.client, request, rail);
  await sendOnByHuman(rail.client, request.job_id, decisions);
  const result = await handle.result();

  await expectOneWritePaidOnce(request, result);
  expectWithinCaps(result);
  expect(result.hops).toBe(4 + decisions);
  expect(result.package.earlier_artifacts?.count).toBeGreaterThan(0);
  expect(await allArtifacts(result.package)).toHaveLength(1 + 3 + 2 * (decisions + 1));
  const runs = await runChain(rail.client, request.job_id, request.continue_after);
  expect(runs.map((r) => r.updates)).toEqual([5, 5, 5, 1]);
  expect(runs.at(-1)?.status).toBe('COMPLETED');
  expect(
    result.acks.filter((a) => a.stage === 'human' && a.reason.startsWith('decided revise by reviewer')),
  ).toHaveLength(decisions);
});
