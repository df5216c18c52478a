/**
 * The ACK timeout on the real dev server: a stage whose workers do not pick the hop up in
 * time is tried once more, then its declared fallback; when nobody answers there either, the job
 * escalates to a human, who can send the hop again. The worker runs a pipeline of the test's
 * own (fixtures/unreachable-retrieve.ts) in which `retrieve` sits on a queue nobody polls and its
 * fallback on a queue of its own.
 */
import path from 'node:path';
import { NativeConnection, Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createActivities } from '../../activities/built-in';
import type { StageWork } from '../../contracts';
import { codeRoot } from '../../src/config';
import { decide, startJob } from '../../src/operator/client';
import { jobRequest, scheduledActivities, stageActivities, startRail, waitForStatus, type Rail } from '../helpers/rail';
import { BACKUP_QUEUE } from './fixtures/unreachable-retrieve';
import { bundleRail } from '../../src/worker/bundle';

let rail: Rail;
let connection: NativeConnection;

beforeAll(async () => {
  const bundle = await bundleRail(
    path.join(codeRoot, 'test', 'integration', 'fixtures', 'unreachable-retrieve-workflows.ts'),
  );
  // The worker holds the reference stages on the main queue only: nobody serves `retrieve`'s
  // queue, and `retrieve-backup` is served (or not) by startBackupWorker.
  rail = await startRail({ workflowBundle: bundle });
  connection = await NativeConnection.connect({ address: inject('temporalAddress') });
});
afterAll(async () => {
  await rail?.stop();
  await connection?.close();
});

/** A worker answering `retrieve-backup` on its own queue (the production retrieve behind it). */
async function startBackupWorker(): Promise<{ stop(): Promise<void> }> {
  const worker = await Worker.create({
    connection,
    namespace: inject('namespace'),
    taskQueue: BACKUP_QUEUE,
    activities: {
      'retrieve-backup': (work: StageWork) =>
        createActivities({ store: rail.store }).retrieve({ ...work, stage: 'retrieve' }),
    },
  });
  const running = worker.run();
  return {
    async stop() {
      worker.shutdown();
      await running;
    },
  };
}

describe('ACK timeout on the real dev server', () => {
  it('retrieve unpicked within its ACK timeout is tried once more, then its fallback answers and the job completes', async () => {
    const backup = await startBackupWorker();
    const request = jobRequest();
    const { handle } = await startJob(rail.client, request, rail);
    const result = await handle.result().finally(() => backup.stop());

    expect(result.status).toBe('completed');
    const history = await handle.fetchHistory();
    const timedOut = (history.events ?? []).filter((e) => e.activityTaskTimedOutEventAttributes);
    expect(timedOut).toHaveLength(2);
    expect(await scheduledActivities(rail.client, request.job_id)).toEqual([
      'intake',
      'retrieve',
      'retrieve',
      'retrieve-backup',
      'draft',
      'judge',
      'writeback',
    ]);
    expect(result.package.hop?.chain).toContain('retrieve');
    expect(await rail.store.listWrites(request.job_id)).toHaveLength(1);
  });

  it('with the fallback unanswered too, the hop fails as "stage unavailable" and escalates with nothing spent on later stages; approve sends it again', async () => {
    const request = jobRequest();
    const { handle } = await startJob(rail.client, request, rail);
    const waiting = await waitForStatus(handle, 'escalated');

    expect(waiting.escalation?.blocked).toBe('retrieve');
    // The package went back to intake (target_unavailable); intake's card says nothing, so a human decides.
    expect((await handle.query<{ stage: string; ack: string }[]>('acks')).map((a) => `${a.stage}:${a.ack}`)).toEqual([
      'intake:accepted',
      'retrieve:accepted',
      'retrieve:target_unavailable',
      'human:accepted',
    ]);
    expect(waiting.escalation?.reasons.join(' ')).toMatch(
      /stage unavailable: no "retrieve-backup" worker picked the hop up within 1s/,
    );
    expect(waiting.escalation?.options).toContain('approve');
    expect(await stageActivities(rail.client, request.job_id)).toEqual([
      'intake',
      'retrieve',
      'retrieve',
      'retrieve-backup',
    ]);
    expect(await rail.store.listWrites(request.job_id)).toHaveLength(0);

    // The backup comes up; the operator sends the blocked hop again, which runs the same chain.
    const backup = await startBackupWorker();
    try {
      await decide(rail.client, request.job_id, {
        action: 'approve',
        actor: 'ops.lead',
        note: 'backup retrieval is up',
      });
      const result = await handle.result();
      expect(result.status).toBe('completed');
    } finally {
      await backup.stop();
    }
    expect(await stageActivities(rail.client, request.job_id)).toEqual([
      'intake',
      'retrieve',
      'retrieve',
      'retrieve-backup',
      'retrieve',
      'retrieve',
      'retrieve-backup',
      'draft',
      'judge',
      'writeback',
    ]);
    expect(await rail.store.listWrites(request.job_id)).toHaveLength(1);
  });
});
