/**
 * A hop's ack names its snapshot, so somebody must hold those bytes: the stage's worker stores
 * them before its work, and the rail keeps those no worker stored. A stage that fails before its
 * store — here a drafter on another deployment that refuses the delivery outright, as
 * `checkDelivery` does for a package its card does not read — stored nothing, so the job answers
 * for the snapshot itself (`handrail show <job> --hop N`).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { stageFailure } from '../../activities/failures';
import { hopSnapshots } from '../../src/operator/snapshot';
import { startJob } from '../../src/operator/client';
import { jobRequest, startRail, waitForStatus, type Rail } from '../helpers/rail';

let rail: Rail;

beforeAll(async () => {
  rail = await startRail({
    activities: () => ({
      draft: () =>
        Promise.reject(
          stageFailure(
            'StageInputInvalid',
            'draft: package is not a valid handoff.v1 (/schema handoff.v1 is not read by draft)',
          ),
        ),
    }),
  });
});
afterAll(async () => {
  await rail?.stop();
});

it("a stage that refuses its delivery before storing anything: the hop's snapshot is answered by the job, not missing", async () => {
  const request = jobRequest();
  const { handle } = await startJob(rail.client, request, rail);
  const escalated = await waitForStatus(handle, 'escalated');
  expect(escalated.escalation?.blocked).toBe('draft');

  const [draft] = await hopSnapshots(rail.client, rail.store, request.job_id, 2);
  expect(draft).toMatchObject({
    stage: 'draft',
    ack: 'accepted',
    source: 'job',
    package: { hop: { count: 2, to: 'draft' }, ack: { ack: 'accepted' } },
  });
  // The stage that ran before it stored its own, as always.
  const [retrieve] = await hopSnapshots(rail.client, rail.store, request.job_id, 1);
  expect(retrieve).toMatchObject({ stage: 'retrieve', source: 'store' });
  await handle.cancel();
});
