/**
 * Writes to a system without idempotency support, through the effect ledger: the ticket pipeline's
 * writer pays over HTTP (the reference writer against a local payments API that counts its real
 * payments), and the first attempt's connection drops after (or before) the payment commits, as a
 * worker dying between send and record would leave it. Temporal retries the writer; each reconcile
 * mode must settle the write in doubt without a second payment, and the job's receipt says how.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ticketTriage } from '../../contracts/pipelines/ticket-triage';
import type { ReconcileMode } from '../../contracts/stages';
import { stageActivities } from '../../activities/stage';
import { openStore, type Store } from '../../src/worker/store';
import { startJob } from '../../src/operator/client';
import { acksQuery, decideUpdate, statusQuery } from '../../workflows/definitions';
import { HandrailAcks } from '../../workflows/search-attributes';
import { payingWriteback } from '../../src/devtools/payments-writer';
import { startPaymentsServer, type PaymentFault, type PaymentsServer } from '../../src/devtools/payments-server';
import { jobRequest, startRail, waitForStatus, type Rail } from '../helpers/rail';

/** Each job's system: how its writer reconciles, and the payments API it pays through. */
const systems = new Map<string, { reconcile: ReconcileMode; server: PaymentsServer }>();

let rail: Rail;
let store: Store;
let dataDir: string;

beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'handrail-ledger-'));
  store = await openStore({ sqlitePath: path.join(dataDir, 'store.sqlite') });
  const paying = stageActivities(ticketTriage, store, {
    writeback: payingWriteback(store, (jobId) => {
      const { reconcile, server } = systems.get(jobId)!;
      return { reconcile, url: server.url };
    }),
  });
  rail = await startRail({ store, activities: () => paying });
});

afterAll(async () => {
  await rail?.stop();
  await store?.close();
  for (const { server } of systems.values()) await server.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

/** A job whose writer pays through a fresh payments API that fails its first request with `fault`. */
async function payingJob(reconcile: ReconcileMode, fault: PaymentFault, honoursIdempotencyKey = false) {
  const request = jobRequest();
  const server = await startPaymentsServer({ honoursIdempotencyKey });
  server.faults = [fault];
  systems.set(request.job_id, { reconcile, server });
  const { handle } = await startJob(rail.client, request, rail);
  return { handle, server, key: `${request.job_id}:writeback:receipt.v1` };
}

describe('writes in doubt, settled by the writer card’s reconcile mode', () => {
  it('idempotent: the payment committed and the answer was lost; the retry resends with the key and the system keeps one payment', async () => {
    const { handle, server, key } = await payingJob('idempotent', 'commit_then_drop', true);
    const result = await handle.result();
    expect(result.status).toBe('completed');
    expect(server.payments.map((p) => p.client_reference)).toEqual([key]);
    expect(result.receipt).toMatchObject({ reference: 'pay_1', in_doubt: { resolution: 'resent', sends: 2 } });
  });

  it('lookup: the payment committed and the answer was lost; the retry finds it by its client reference and pays nothing more', async () => {
    const { handle, server } = await payingJob('lookup', 'commit_then_drop');
    const result = await handle.result();
    expect(result.status).toBe('completed');
    expect(server.payments).toHaveLength(1);
    expect(result.receipt).toMatchObject({ reference: 'pay_1', in_doubt: { resolution: 'found_by_lookup', sends: 1 } });
  });

  it('lookup: the request was lost before it committed; the retry finds no payment and pays once', async () => {
    const { handle, server } = await payingJob('lookup', 'drop_before_commit');
    const result = await handle.result();
    expect(result.status).toBe('completed');
    expect(server.payments).toHaveLength(1);
    expect(result.receipt).toMatchObject({ in_doubt: { resolution: 'sent_after_lookup', sends: 2 } });
  });

  it('none: the retry sends nothing and escalates with the evidence; a human says it happened, and the job completes on that reference', async () => {
    const { handle, server, key } = await payingJob('none', 'commit_then_drop');
    const waiting = await waitForStatus(handle, 'escalated', 60_000);
    expect(waiting.escalation?.reasons.join(' ')).toContain(`write ${key} to crm is in doubt`);
    expect(server.payments).toHaveLength(1);
    // A word on a write in doubt goes with an approve only.
    await expect(
      handle.executeUpdate(decideUpdate, { args: [{ action: 'reject', actor: 'ops.lead', in_doubt: { send: true } }] }),
    ).rejects.toMatchObject({ cause: { message: expect.stringMatching(/^in_doubt is a word on a write in doubt/) } });
    await handle.executeUpdate(decideUpdate, {
      args: [{ action: 'approve', actor: 'ops.lead', in_doubt: { happened: server.payments[0]!.id } }],
    });
    const result = await handle.result();
    expect(result.status).toBe('completed');
    expect(server.payments).toHaveLength(1);
    expect(result.receipt).toMatchObject({ reference: 'pay_1', in_doubt: { resolution: 'human_happened', sends: 1 } });
  });

  it('none: the request never committed; a human says send it, and it is paid once', async () => {
    const { handle, server, key } = await payingJob('none', 'drop_before_commit');
    await waitForStatus(handle, 'escalated', 60_000);
    expect(server.payments).toHaveLength(0);
    await handle.executeUpdate(decideUpdate, {
      args: [{ action: 'approve', actor: 'ops.lead', in_doubt: { send: true } }],
    });
    const result = await handle.result();
    expect(result.status).toBe('completed');
    expect(server.payments).toHaveLength(1);
    expect(result.receipt).toMatchObject({ in_doubt: { resolution: 'human_send', sends: 2 } });
    expect(await store.findEffect(key)).toMatchObject({ reference: 'pay_1', send_allowed_by: null });
  });

  it('a final refusal (HTTP 422): the writer fails WriteRefused at its first attempt and the job escalates; one request, nothing paid, the refusal on the ledger', async () => {
    const { handle, server, key } = await payingJob('lookup', 'refuse');
    const waiting = await waitForStatus(handle, 'escalated', 60_000);
    expect(waiting.escalation?.reasons.join(' ')).toContain('payment refused: the account is closed');
    expect(server.requests).toEqual([expect.objectContaining({ client_reference: key, ending: 'refused' })]);
    expect(server.payments).toHaveLength(0);
    expect(await store.findEffect(key)).toMatchObject({
      sends: 1,
      reference: null,
      error: expect.stringMatching(/^HTTP 422/),
    });
    // One attempt of the writer: the refusal is not retried.
    const { events } = await handle.fetchHistory();
    const writer = events!.find((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'writeback');
    const attempts = events!
      .map((e) => e.activityTaskStartedEventAttributes)
      .filter((a) => Number(a?.scheduledEventId) === Number(writer?.eventId))
      .map((a) => a!.attempt);
    expect(attempts).toEqual([1]);
    await handle.terminate('test over');
  });

  it('the acks, the status query and the Web UI show the write in doubt and how it was settled', async () => {
    const { handle, server, key } = await payingJob('none', 'commit_then_drop');
    await waitForStatus(handle, 'escalated', 60_000);
    const waiting = await handle.query(statusQuery);
    expect(waiting.last_ack).toMatchObject({ stage: 'human', in_doubt: { resolution: 'escalated', write_key: key } });
    const writerFirst = (await handle.query(acksQuery)).filter((a) => a.stage === 'writeback');
    expect(writerFirst.at(-1)).toMatchObject({
      ack: 'accepted',
      in_doubt: { resolution: 'escalated', write_key: key },
    });
    await handle.executeUpdate(decideUpdate, {
      args: [{ action: 'approve', actor: 'ops.lead', in_doubt: { happened: server.payments[0]!.id } }],
    });
    const result = await handle.result();
    expect(result.acks.filter((a) => a.stage === 'human' && a.actor === 'ops.lead')).toEqual([
      expect.objectContaining({
        in_doubt: { resolution: 'human_happened', reference: 'pay_1' },
        reason: expect.stringContaining('write in doubt: a human said it happened (pay_1)'),
      }),
    ]);
    expect(result.acks.filter((a) => a.stage === 'writeback').at(-1)).toMatchObject({
      ack: 'accepted',
      in_doubt: { resolution: 'human_happened', write_key: key, reference: 'pay_1', sends: 1 },
    });
    // The Web UI: the job's list filters on HandrailAcks, its page shows the details.
    expect((await handle.describe()).typedSearchAttributes.get(HandrailAcks)).toContain('in_doubt');
    const { currentDetails } = await handle.query<{ currentDetails?: string }>('__temporal_workflow_metadata');
    expect(currentDetails).toContain('accepted · write in doubt: escalated to a human');
    expect(currentDetails).toContain('accepted · write in doubt: a human said it happened (pay_1), 1 send');
  });
});
