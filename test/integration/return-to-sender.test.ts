/**
 * Return to sender on the real dev server: `retrieve` is never picked up (its retry
 * included), the package goes back to `intake` with a `target_unavailable` ack, and intake's card
 * reroutes it to `retrieve-lite`; the job completes with one write.
 */
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { StageWork } from '../../contracts';
import { codeRoot } from '../../src/config';
import { startJob } from '../../src/operator/client';
import { jobRequest, scheduledActivities, startRail, type Rail } from '../helpers/rail';
import { bundleRail } from '../../src/worker/bundle';

let rail: Rail;

beforeAll(async () => {
  const bundle = await bundleRail(
    path.join(codeRoot, 'test', 'integration', 'fixtures', 'return-to-sender-workflows.ts'),
  );
  // The worker holds the reference stages on the main queue (nobody serves retrieve's queue),
  // plus retrieve-lite: the reference retrieval under another name.
  rail = await startRail({
    workflowBundle: bundle,
    activities: (real) => ({ 'retrieve-lite': (work: StageWork) => real.retrieve({ ...work, stage: 'retrieve' }) }),
  });
});
afterAll(async () => {
  await rail?.stop();
});

it('an unavailable target sends the package back to its sender, whose card reroutes it; the job completes', async () => {
  const request = jobRequest();
  const { handle } = await startJob(rail.client, request, rail);
  const result = await handle.result();

  expect(result.status).toBe('completed');
  expect(result.acks.map((a) => `${a.stage}:${a.ack}`)).toEqual([
    'intake:accepted',
    'retrieve:accepted',
    'retrieve:target_unavailable',
    'retrieve-lite:accepted',
    'draft:accepted',
    'judge:accepted',
    'writeback:accepted',
  ]);
  expect(result.acks[2]!.reason).toMatch(/^stage unavailable: no "retrieve" worker picked the hop up within 1s/);
  // The rerouted hop, as retrieve-lite was delivered it: sent by intake, saying why.
  const rerouted = await rail.store.findStageRecord(result.acks[3]!.delivery_key);
  expect(rerouted?.result.package.hop).toMatchObject({
    from: 'intake',
    to: 'retrieve-lite',
    reason: 'returned to intake: retrieve unavailable, reroute to retrieve-lite',
  });
  expect(result.package.hop?.chain).toEqual([
    'client',
    'intake',
    'retrieve',
    'retrieve-lite',
    'draft',
    'judge',
    'writeback',
  ]);
  expect(await scheduledActivities(rail.client, request.job_id)).toEqual([
    'intake',
    'retrieve',
    'retrieve',
    'retrieve-lite',
    'draft',
    'judge',
    'writeback',
  ]);
  expect(await rail.store.listWrites(request.job_id)).toHaveLength(1);
});
