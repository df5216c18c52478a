import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../../src/worker/store/content';
import type { Store } from '../../../src/worker/store';
import { openFresh, storeBackends } from '../../helpers/store-backends';

const intent = { key: 'job-1:payout:payout.v1', system: 'payments', request: '{"usd":42}' };

for (const backend of storeBackends()) {
  describe.skipIf(backend.skip !== null)(`effect ledger on ${backend.name}`, () => {
    let store: Store;
    beforeEach(async () => {
      store = await openFresh(backend);
    });
    afterEach(async () => {
      await store.close();
    });

    it('notes an intent once per write key, however concurrent; it is in doubt until its outcome is noted', async () => {
      const intents = await Promise.all(Array.from({ length: 5 }, () => store.recordIntent(intent)));
      expect(intents.filter((i) => i.fresh)).toHaveLength(1);
      const { entry } = intents[0]!;
      expect(entry).toMatchObject({
        write_key: intent.key,
        job_id: 'job-1',
        system: 'payments',
        request: intent.request,
        request_hash: `sha256:${sha256Hex(intent.request)}`,
        sends: 1,
        reference: null,
        error: null,
        resolution: null,
      });
      const done = await store.recordOutcome(intent.key, { reference: 'pay_1' });
      expect(done).toMatchObject({ reference: 'pay_1', error: null });
      expect(done.outcome_at).not.toBeNull();
      // The first reference stands: a late answer of another send does not replace it.
      expect((await store.recordOutcome(intent.key, { reference: 'pay_2' })).reference).toBe('pay_1');
      expect(await store.listEffects('job-1')).toEqual([done]);
    });

    it('a resend counts, clears a refusal, and keeps how an in-doubt write was resolved', async () => {
      await store.recordIntent(intent);
      expect(await store.recordOutcome(intent.key, { error: 'HTTP 402 card declined' })).toMatchObject({
        error: 'HTTP 402 card declined',
      });
      expect(await store.recordResend(intent.key)).toMatchObject({ sends: 2, error: null, outcome_at: null });
      expect(await store.recordOutcome(intent.key, { reference: 'pay_9', resolution: 'resent' })).toMatchObject({
        reference: 'pay_9',
        resolution: 'resent',
      });
    });

    it('a human decides a write in doubt: it happened (with its reference), or send it; a settled one is refused', async () => {
      await store.recordIntent(intent);
      const send = { send: true as const, actor: 'ops', id: 'job-1:payout:5' };
      const allowed = await store.decideInDoubt(intent.key, send);
      expect(allowed).toMatchObject({ send_allowed_by: 'ops', reference: null, decision_id: 'job-1:payout:5' });
      expect(await store.recordResend(intent.key)).toMatchObject({ sends: 2, send_allowed_by: null });
      // The same decision again (a retried attempt of its hop) allows no second send.
      expect(await store.decideInDoubt(intent.key, send)).toMatchObject({ sends: 2, send_allowed_by: null });
      const happened = await store.decideInDoubt(intent.key, { happened: 'pay_7', actor: 'ops', id: 'job-1:payout:7' });
      expect(happened).toMatchObject({ reference: 'pay_7', resolution: 'human_happened' });
      await expect(store.decideInDoubt(intent.key, { ...send, id: 'job-1:payout:9' })).rejects.toThrow(
        'write job-1:payout:payout.v1 is not in doubt: payments named it pay_7',
      );
      // A decision on a write key the ledger never noted is refused, and notes nothing under it.
      await expect(store.decideInDoubt('job-1:other:x.v1', send)).rejects.toThrow(
        new TypeError('no effect recorded under write key job-1:other:x.v1'),
      );
      expect(await store.findEffect('job-1:other:x.v1')).toBeNull();
      expect((await store.listEffects('job-1')).map((e) => e.write_key)).toEqual([intent.key]);
    });
  });
}
