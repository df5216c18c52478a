import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { defineStage } from '../../../contracts';
import { sendOnce } from '../../../activities/effect-ledger';
import { httpPayments } from '../../../activities/payments-http';
import { openStore, type Store } from '../../../src/worker/store';
import { startPaymentsServer, type PaymentsServer } from '../../../src/devtools/payments-server';

const payout = defineStage({
  name: 'payout',
  role: 'writer',
  accepts: ['approval.v1'],
  outputs: ['payout.v1'],
  tools: [{ name: 'payments.pay', access: 'write', system: 'payments' }],
  writes: 'payments',
  reconcile: 'none',
  criteria: ['pays once'],
  nominalCostUsd: 0,
});
const job = { job_id: 'exp-1', constraints: [] };
const KEY = 'exp-1:payout:payout.v1';

describe('sendOnce through the effect ledger', () => {
  let dir: string;
  let store: Store;
  let server: PaymentsServer;
  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'handrail-send-once-'));
    store = await openStore({ sqlitePath: path.join(dir, 'store.sqlite') });
    server = await startPaymentsServer();
  });
  afterEach(async () => {
    await store.close();
    await server.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('sends once with the key in the Idempotency-Key header and as client reference; a repeat answers the outcome', async () => {
    const first = await sendOnce(store, payout, job, { body: '{"usd":42}' }, httpPayments(server.url));
    expect(first).toMatchObject({ write_key: KEY, system: 'payments', reference: 'pay_1', status: 'created' });
    expect(first.in_doubt).toBeUndefined();
    expect(await sendOnce(store, payout, job, { body: '{"usd":42}' }, httpPayments(server.url))).toEqual({
      ...first,
      status: 'existing',
    });
    expect(server.payments).toEqual([{ id: 'pay_1', client_reference: KEY, body: { usd: 42, client_reference: KEY } }]);
  });

  it("a system's final refusal fails WriteRefused, non-retryable, noted on the ledger; a retried attempt sends nothing", async () => {
    const pay = () => sendOnce(store, payout, job, { body: '{"usd":0}' }, httpPayments(server.url));
    const refused = { type: 'WriteRefused', nonRetryable: true, message: expect.stringContaining('HTTP 422') };
    await expect(pay()).rejects.toMatchObject(refused);
    expect(await store.findEffect(KEY)).toMatchObject({ error: expect.stringMatching(/^HTTP 422/), reference: null });
    await expect(pay()).rejects.toMatchObject(refused);
    expect(await store.findEffect(KEY)).toMatchObject({ sends: 1 });
    expect(server.requests).toHaveLength(1);
    expect(server.payments).toHaveLength(0);
  });

  it('none: a write in doubt is not sent again; the stage fails WriteInDoubt with the evidence', async () => {
    server.faults = ['commit_then_drop'];
    const pay = () => sendOnce(store, payout, job, { body: '{"usd":42}' }, httpPayments(server.url));
    await expect(pay()).rejects.toThrow(/fetch failed/);
    await expect(pay()).rejects.toMatchObject({
      type: 'WriteInDoubt',
      nonRetryable: true,
      details: [{ in_doubt: { write_key: KEY, system: 'payments', request: '{"usd":42}', sends: 1 } }],
    });
    expect(server.payments).toHaveLength(1);
  });

  it('refuses a key that holds another request, and sends nothing', async () => {
    await sendOnce(store, payout, job, { body: '{"usd":42}' }, httpPayments(server.url));
    await expect(sendOnce(store, payout, job, { body: '{"usd":43}' }, httpPayments(server.url))).rejects.toMatchObject({
      type: 'VerdictNotPassing',
      message: expect.stringContaining(`write key ${KEY} already holds another write`),
    });
    expect(server.payments).toHaveLength(1);
  });
});
