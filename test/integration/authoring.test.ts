/**
 * docs/authoring.md "Adding a stage", run: a stage defined in a test fixture (test/integration/fixtures/
 * authoring/) reaches the rail with no edit to the rail, the reference pipeline or the worker.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { codeRoot } from '../../src/config';
import { startJob } from '../../src/operator/client';
import { jobRequest, scheduledActivities, startRail, type Rail } from '../helpers/rail';
import { notifyActivities } from './fixtures/authoring/notify-activities';
import { triageWithNotify } from './fixtures/authoring/notify-pipeline';
import { bundleRail } from '../../src/worker/bundle';

let rail: Rail;

beforeAll(async () => {
  const bundle = await bundleRail(
    path.join(codeRoot, 'test', 'integration', 'fixtures', 'authoring', 'notify-workflows.ts'),
  );
  rail = await startRail({ workflowBundle: bundle, pipelines: [triageWithNotify], stageActivities: notifyActivities });
});
afterAll(async () => {
  await rail?.stop();
});

describe('a pipeline an author defines', () => {
  it('runs the added stage after the CRM write, acked like any other, and completes by its own rule', async () => {
    const request = { ...jobRequest(), pipeline: 'triage-with-notify' };
    const { handle } = await startJob(rail.client, request, rail);
    const result = await handle.result();

    expect(result).toMatchObject({ status: 'completed', reason: 'written back and announced' });
    expect(result.package.hop?.chain).toEqual([
      'client',
      'intake',
      'retrieve',
      'draft',
      'judge',
      'writeback',
      'notify',
    ]);
    expect(result.acks.map((a) => `${a.stage}:${a.ack}`)).toEqual(
      ['intake', 'retrieve', 'draft', 'judge', 'writeback', 'notify'].map((s) => `${s}:accepted`),
    );
    expect(result.package.artifacts.at(-1)?.type).toBe('notice.v1');
    expect(await scheduledActivities(rail.client, request.job_id)).toEqual([
      'intake',
      'retrieve',
      'draft',
      'judge',
      'writeback',
      'notify',
    ]);
    expect(await rail.store.listWrites(request.job_id)).toHaveLength(1);
    // The wallet paid for the new stage too: nominal costs of the six stages.
    expect(result.spent_usd).toBeCloseTo(0.001 + 0.002 + 0.01 + 0.005 + 0.001 + 0.0005, 6);
  });

  it('a job naming a pipeline this worker does not run fails at once, naming the ones it does', async () => {
    const request = { ...jobRequest(), pipeline: 'no-such-pipeline' };
    const { handle } = await startJob(rail.client, request, rail);
    await expect(handle.result()).rejects.toMatchObject({
      cause: {
        message: expect.stringMatching(/unknown pipeline "no-such-pipeline"; this worker runs triage-with-notify/),
      },
    });
  });
});
