/**
 * A job's first search attributes come with its start: `startJob` sets
 * them, so the Web UI and `handrail list` show a job before any worker picks it up, and the rail
 * upserts only what differs from what the start carried.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WorkflowFailedError } from '@temporalio/client';
import { cancelJob, listJobs, startJob } from '../../src/operator/client';
import type { JobStatusView } from '../../workflows/definitions';
import {
  HandrailAck,
  HandrailAcks,
  HandrailHops,
  HandrailPipeline,
  HandrailStage,
  HandrailStatus,
  HandrailUsdRemaining,
  HandrailVerdict,
} from '../../workflows/search-attributes';
import { handrailUpserts, jobRequest, startRail, uniqueId, until, type Rail } from '../helpers/rail';

let rail: Rail;

beforeAll(async () => {
  rail = await startRail();
});
afterAll(async () => {
  await rail?.stop();
});

describe('a job shows its attributes from its start', () => {
  it('startJob sets them: a job on a queue no worker polls already shows its pipeline, first stage, status and wallet; terminated so, it ended as Temporal says and is not listed as running', async () => {
    const request = jobRequest({ pipeline: 'support-routing', budget: { usd: 0.25, revisions: 1 } });
    const taskQueue = uniqueId('no-worker');
    const { handle } = await startJob(rail.client, request, { taskQueue });
    try {
      const attrs = (await handle.describe()).typedSearchAttributes;
      expect({
        status: attrs.get(HandrailStatus),
        pipeline: attrs.get(HandrailPipeline),
        stage: attrs.get(HandrailStage),
        ack: attrs.get(HandrailAck),
        verdict: attrs.get(HandrailVerdict),
        hops: attrs.get(HandrailHops),
        usd: attrs.get(HandrailUsdRemaining),
        acks: attrs.get(HandrailAcks),
      }).toEqual({
        status: 'running',
        pipeline: 'support-routing',
        stage: 'classify',
        ack: 'none',
        verdict: 'none',
        hops: 0,
        usd: 0.25,
        acks: undefined,
      });
    } finally {
      await handle.terminate('test over');
    }
    // Closed with the start's `running` still on it: it ended as Temporal says, and is not listed as running.
    await expect(cancelJob(rail.client, request.job_id)).rejects.toThrow(
      `job "${request.job_id}" already ended (terminated)`,
    );
    await until(
      'visibility to list it terminated',
      async () => (await listJobs(rail.client, { taskQueue }))[0]?.run_status === 'TERMINATED',
    );
    expect(await listJobs(rail.client, { taskQueue, status: 'running' })).toEqual([]);
    // Listed, it shows how the run ended, not the `running` its attribute still says (a
    // terminated run runs no code to change it).
    expect((await listJobs(rail.client, { taskQueue }))[0]?.status).toBe('terminated');
  });

  it('a job refused before its first hop (a pipeline this worker does not run) says rejected, not the running it was started with', async () => {
    const request = jobRequest({ pipeline: 'no-such-pipeline' });
    const handle = await rail.client.workflow.start('handoffJob', {
      taskQueue: rail.taskQueue,
      workflowId: request.job_id,
      args: [request],
      typedSearchAttributes: [{ key: HandrailStatus, value: 'running' }],
    });
    const failure = await handle.result().then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(failure).toBeInstanceOf(WorkflowFailedError);
    expect((failure as WorkflowFailedError).cause?.message).toContain('unknown pipeline "no-such-pipeline"');
    expect((await handle.describe()).typedSearchAttributes.get(HandrailStatus)).toBe('rejected');
  });

  it('the rail upserts only what differs from the start: a caller who set one attribute wrong and left others out gets exactly those', async () => {
    const request = jobRequest();
    const handle = await rail.client.workflow.start('handoffJob', {
      taskQueue: rail.taskQueue,
      workflowId: request.job_id,
      args: [request],
      typedSearchAttributes: [
        { key: HandrailStatus, value: 'running' },
        { key: HandrailPipeline, value: 'ticket-triage' },
        { key: HandrailStage, value: 'writeback' },
      ],
    });
    expect((await handle.result()).status).toBe('completed');
    const upserts = handrailUpserts((await handle.fetchHistory()).events ?? []);
    // The first hop's: the wrong stage and the four the start lacked; not the two it had right, nor the empty list.
    expect(upserts[0]).toEqual([
      'HandrailAck',
      'HandrailHops',
      'HandrailStage',
      'HandrailUsdRemaining',
      'HandrailVerdict',
    ]);
    const view = await handle.query<JobStatusView>('status');
    const attrs = (await handle.describe()).typedSearchAttributes;
    expect([
      attrs.get(HandrailStatus),
      attrs.get(HandrailStage),
      attrs.get(HandrailHops),
      attrs.get(HandrailUsdRemaining),
    ]).toEqual(['completed', view.stage, view.hops, view.usd_remaining]);
  });

  it('a job started with none gets every attribute at its first hop but the empty ack list', async () => {
    const request = jobRequest();
    const handle = await rail.client.workflow.start('handoffJob', {
      taskQueue: rail.taskQueue,
      workflowId: request.job_id,
      args: [request],
    });
    expect((await handle.result()).status).toBe('completed');
    const upserts = handrailUpserts((await handle.fetchHistory()).events ?? []);
    expect(upserts[0]).toEqual([
      'HandrailAck',
      'HandrailHops',
      'HandrailPipeline',
      'HandrailStage',
      'HandrailStatus',
      'HandrailUsdRemaining',
      'HandrailVerdict',
    ]);
    expect(upserts).toHaveLength(6);
  });
});
