import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { defineStage } from '../../../contracts';
import { writeOnce } from '../../../activities/stage';
import { sha256Hex } from '../../../src/worker/store/content';
import type { Store } from '../../../src/worker/store';
import { openFresh, storeBackends } from '../../helpers/store-backends';

/** A writer of a system that is not the reference pipeline's CRM. */
const payout = defineStage({
  name: 'payout',
  role: 'writer',
  accepts: ['approval.v1'],
  outputs: ['payout.v1'],
  tools: [{ name: 'payments.pay', access: 'write', system: 'payments' }],
  writes: 'payments',
  reconcile: 'idempotent',
  criteria: ['pays once'],
  nominalCostUsd: 0,
});
const job = { job_id: 'exp-1', constraints: ['no refund promises'] };
const write = { reference: 'payouts/E-1', payload: '{"usd":42}' };

for (const backend of storeBackends()) {
  describe.skipIf(backend.skip !== null)(`writeOnce for any declared system, on ${backend.name}`, () => {
    let store: Store;
    beforeEach(async () => {
      store = await openFresh(backend);
    });
    afterEach(async () => {
      await store.close();
    });

    it("keys the write job_id:stage:artifact_type and names the card's system; a repeat finds it existing", async () => {
      const first = await writeOnce(store, payout, job, write);
      expect(first).toMatchObject({
        write_key: 'exp-1:payout:payout.v1',
        system: 'payments',
        reference: 'payouts/E-1',
        payload_hash: `sha256:${sha256Hex(write.payload)}`,
        status: 'created',
      });
      expect(await writeOnce(store, payout, job, write)).toEqual({ ...first, status: 'existing' });
      expect(await store.listWrites('exp-1')).toEqual([first]);
    });

    it('refuses a key that already holds another write, and writes nothing for this job', async () => {
      await writeOnce(store, payout, job, write);
      await expect(writeOnce(store, payout, job, { ...write, payload: '{"usd":43}' })).rejects.toMatchObject({
        type: 'VerdictNotPassing',
        message:
          'payout refuses: write key exp-1:payout:payout.v1 already holds another write (to payments payouts/E-1); nothing was written for this job',
      });
      expect(await store.listWrites('exp-1')).toHaveLength(1);
    });

    it("holds the written text to the job's constraints, and refuses a stage that writes nothing", async () => {
      await expect(
        writeOnce(store, payout, job, { ...write, text: 'We will refund you in full.' }),
      ).rejects.toMatchObject({ type: 'VerdictNotPassing' });
      const approver = defineStage({
        name: 'approve',
        role: 'critic',
        accepts: ['expense.v1'],
        outputs: ['approval.v1'],
        criteria: ['policy'],
        nominalCostUsd: 0,
      });
      await expect(writeOnce(store, approver, job, write)).rejects.toMatchObject({ type: 'StageInputInvalid' });
      expect(await store.listWrites('exp-1')).toEqual([]);
    });
  });
}
