/**
 * No-progress detection on the dev server: a judge that fails every draft for the same reason
 * (swapped in for the reference one) stops the critique loop at its second identical verdict,
 * acked `no_progress`, instead of spending every revision the wallet holds.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { readArtifactBody, requireArtifact, stageActivities, SummaryMd, VerdictV1, writeArtifact } from '../../src';
import { ticketTriage } from '../../contracts/pipelines';
import { cancelJob, startJob } from '../../src/operator/client';
import { openStore, type Store } from '../../src/worker/store';
import { jobRequest, startRail, stageActivities as scheduledStages, waitForStatus, type Rail } from '../helpers/rail';

let rail: Rail;
let store: Store;
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'handrail-no-progress-'));

/** Fails every draft as off topic, whatever it says. */
const stubbornJudge = (s: Store) =>
  stageActivities(ticketTriage, s, {
    judge: async (pkg) => {
      const summary = await readArtifactBody(s, requireArtifact(pkg, 'judge', 'summary_md'), SummaryMd);
      const failures = [`off_topic: the note misses the question (draft of ${summary.markdown.length} characters)`];
      const body = {
        verdict: 'fail' as const,
        scores: { answers_question: 0 },
        failures,
        summary_hash: requireArtifact(pkg, 'judge', 'summary_md').hash,
      };
      return {
        artifact: await writeArtifact(s, 'verdict.v1', VerdictV1, body),
        body,
        cost_usd: 0.005,
        evaluator: { last_verdict: 'fail', failures },
      };
    },
  }).judge;

beforeAll(async () => {
  store = await openStore({ databaseUrl: process.env.DATABASE_URL, dataDir });
  rail = await startRail({ store, activities: () => ({ judge: stubbornJudge(store) }) });
});
afterAll(async () => {
  await rail?.stop();
  await store?.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

it('the second identical verdict is acked no_progress and the job waits for a human, with revisions left', async () => {
  const request = jobRequest({ budget: { usd: 1, revisions: 3 }, max_hops: 12 });
  const { handle } = await startJob(rail.client, request, rail);
  const view = await waitForStatus(handle, 'escalated');
  const acks = await handle.query<{ stage: string; ack: string; reason: string }[]>('acks');
  expect(acks.map((a) => `${a.stage}:${a.ack}`)).toEqual([
    'intake:accepted',
    'retrieve:accepted',
    'draft:accepted',
    'judge:accepted',
    'draft:accepted',
    'judge:accepted',
    'judge:no_progress',
    'human:accepted',
  ]);
  expect(acks[6]!.reason).toBe('"judge" failed the work for the same reasons twice in a row: off_topic');
  expect(view.escalation?.reasons.join(' ')).toMatch(/^no progress: "judge" failed the work/);
  // Two revisions were still in the wallet: without the check the loop would have spent them.
  expect(view.revisions_remaining).toBe(2);
  expect((await scheduledStages(rail.client, request.job_id)).filter((s) => s === 'judge')).toHaveLength(2);
  await cancelJob(rail.client, request.job_id);
});
