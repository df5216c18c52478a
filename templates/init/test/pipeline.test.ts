// The pipeline end to end on a real Temporal dev server started for this run (`handrail/testing`
// finds or installs the `temporal` CLI), with this project's worker and a throwaway store.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startJob } from 'handrail/client';
import { runJob, startTestServer, startTestWorker, type TestServer, type TestWorker } from 'handrail/testing';
import { handrail } from '../src/plugin.js';

let server: TestServer;
let rail: TestWorker;

before(async () => {
  server = await startTestServer();
  rail = await startTestWorker(server, handrail);
});

after(async () => {
  await rail?.stop();
  await server?.stop();
});

const request = (id: string, amount_usd: number, merchant = 'Trattoria Roma') => ({
  job_id: `expense-${id}`,
  entry: { id, employee: 'e-1024', amount_usd, category: 'meals', merchant, description: 'team lunch' },
  goal: `Approve and pay expense ${id} if it is within policy`,
  constraints: [],
  budget: { usd: 0.05, revisions: 0 },
  decision_timeout: '2s',
});

test('a claim within policy is checked twice at once, approved, and paid once to payments', async () => {
  const result = await runJob(rail, request('ok-1', 84.2));
  assert.equal(result.status, 'completed');
  assert.equal(result.receipt?.system, 'payments');
  assert.equal(result.receipt?.reference, 'pay_ok-1');
  assert.equal(result.receipt?.write_key, 'expense-ok-1:payout:payout.v1');
  assert.deepEqual(result.package.hop?.chain, ['client', 'extract', 'policy', 'fraud', 'merge', 'approver', 'payout']);
});

test('starting the same job again attaches to it: still one payment', async () => {
  const first = await runJob(rail, request('ok-2', 20));
  const again = await startJob(rail.client, request('ok-2', 20), { taskQueue: rail.taskQueue });
  assert.equal(again.created, false);
  assert.deepEqual(await again.handle.result(), first);
});

test('an over-limit claim is refused by the approver and waits for a human; nothing is paid', async () => {
  const result = await runJob(rail, request('big-1', 900));
  assert.equal(result.status, 'escalated');
  assert.equal(result.receipt, undefined);
  assert.match(result.package.evaluator.failures.join(' '), /over_limit/);
});

test('an entry that does not match the pipeline’s schema is refused before any stage runs', async () => {
  const bad = { ...request('bad-1', 10), entry: { id: 'bad-1', amount_usd: -5 } };
  // The client checks it first and names the fields…
  await assert.rejects(
    startJob(rail.client, bad, { taskQueue: rail.taskQueue }),
    (err: Error) => err.name === 'InvalidJobRequestError' && /entry\.amount_usd/.test(err.message),
  );
  // …and the rail refuses it too when a start bypasses the client (any SDK, the CLI, the Web UI).
  const handle = await rail.client.workflow.start('handoffJob', {
    taskQueue: rail.taskQueue,
    workflowId: 'expense-bad-1',
    args: [bad],
  });
  await assert.rejects(handle.result(), (err: Error) =>
    /invalid job request: entry/.test(String((err.cause as Error | undefined)?.message)),
  );
});
