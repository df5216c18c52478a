/**
 * Worker Deployment Versioning (docs/cluster.md, "Rolling out workflow changes"): handrail's
 * workers given a deployment version poll as that version, every queue of the process, so a job
 * started while it is the current version runs pinned to it from its first workflow task to its
 * write on the writers' queue.
 */
import { temporal } from '@temporalio/proto';
import { expect, it } from 'vitest';
import { startJob } from '../../src/operator/client';
import { setCurrentVersion } from '../../bench/rollout-run';
import { jobRequest, startRail, uniqueId } from '../helpers/rail';

it('a job started on a versioned worker runs pinned to its version, writes included', async () => {
  const deploymentName = uniqueId('deployment');
  const rail = await startRail({
    deployment: {
      version: { deploymentName, buildId: 'build-1' },
      useWorkerVersioning: true,
      defaultVersioningBehavior: 'PINNED',
    },
  });
  try {
    await setCurrentVersion(rail.client, deploymentName, 'build-1');
    const request = jobRequest();
    const { handle } = await startJob(rail.client, request, rail);
    expect((await handle.result()).status).toBe('completed');
    // The write ran on the writers' queue, which the server dispatches to the pinned version only.
    expect(await rail.store.listWrites(request.job_id)).toHaveLength(1);

    const completed = ((await handle.fetchHistory()).events ?? [])
      .map((e) => e.workflowTaskCompletedEventAttributes)
      .filter((a) => a !== null && a !== undefined);
    expect(completed.length).toBeGreaterThan(1);
    for (const task of completed) {
      expect(task.deploymentVersion).toMatchObject({ deploymentName, buildId: 'build-1' });
      expect(task.versioningBehavior).toBe(temporal.api.enums.v1.VersioningBehavior.VERSIONING_BEHAVIOR_PINNED);
    }
    const info = (await handle.describe()).raw.workflowExecutionInfo?.versioningInfo;
    expect(info?.behavior).toBe(temporal.api.enums.v1.VersioningBehavior.VERSIONING_BEHAVIOR_PINNED);
    expect(info?.deploymentVersion).toMatchObject({ deploymentName, buildId: 'build-1' });
  } finally {
    await rail.stop();
  }
}, 60_000);
