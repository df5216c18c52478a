import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadHelpCenter } from '../../../src/worker/corpus';
import { searchTerms } from '../../../src/worker/corpus/query';
import { openStore, WAITING_STEPS_PREFIX, type CrmPatch, type HelpChunk, type Store } from '../../../src/worker/store';
import { canonicalJson, sha256Hex } from '../../../src/worker/store/content';
import { LATEST_SCHEMA_VERSION } from '../../../src/worker/store/migrations';
import type { StageResult } from '../../../contracts/stages';
import { openFresh, storeBackends } from '../../helpers/store-backends';

const patch: CrmPatch = {
  ticket_id: 'tkt_1',
  customer_id: 'cus_9',
  status: 'triaged',
  note: 'Summary [refund-policy.2]',
};
const KEY = 'job_1:writeback:receipt.v1';

function stageResult(tag: string): StageResult {
  return {
    package: { tag } as unknown as StageResult['package'],
    artifact: { type: 'summary_md', uri: `handrail://artifacts/${'a'.repeat(64)}` },
    cost_usd: 0.01,
    body: { tag },
  };
}

for (const backend of storeBackends()) {
  describe.skipIf(backend.skip !== null)(
    `store on ${backend.name}${backend.skip ? ` (skipped: ${backend.skip})` : ''}`,
    () => {
      let store: Store;
      beforeEach(async () => {
        store = await openFresh(backend);
      });
      afterEach(async () => {
        await store.close();
      });

      it('applies every migration once, and reopening is a no-op', async () => {
        expect(store.backend).toBe(backend.name);
        expect(await store.schemaVersion()).toBe(LATEST_SCHEMA_VERSION);
      });

      it('addresses artifacts by content: equal bodies share one address, any change gets another', async () => {
        const a = await store.putContent(canonicalJson({ b: 1, a: [1, 2] }));
        const again = await store.putContent(canonicalJson({ a: [1, 2], b: 1 }));
        const other = await store.putContent(canonicalJson({ a: [2, 1], b: 1 }));
        expect(again).toBe(a);
        expect(other).not.toBe(a);
        expect(await store.getContent(a)).toBe('{"a":[1,2],"b":1}');
        expect(await store.getContent('f'.repeat(64))).toBeNull();
      });

      it('keeps the first stage result per delivery key, even under concurrent records', async () => {
        expect(await store.findStageCompletion('job_1:draft:3')).toBeNull();
        const recorded = await Promise.all(
          ['first', 'second', 'third', 'fourth', 'fifth'].map((t) =>
            store.recordStageCompletion('job_1:draft:3', stageResult(t)),
          ),
        );
        const winner = recorded[0];
        expect(recorded.every((r) => JSON.stringify(r) === JSON.stringify(winner))).toBe(true);
        expect(await store.findStageCompletion('job_1:draft:3')).toEqual(winner!.result);
        expect(await store.findStageCompletion('job_1:draft:4')).toBeNull();
      });

      it("keeps a delivery's steps, the first record of each winning, apart from other deliveries'", async () => {
        const kept = await Promise.all([
          store.recordStageStep('job_1:research:2', 'model:1:aa', 'first'),
          store.recordStageStep('job_1:research:2', 'model:1:aa', 'second'),
        ]);
        expect(new Set(kept).size).toBe(1);
        await store.recordStageStep('job_1:research:2', 'tool:lookup:call_1', '{"fact":1}');
        await store.recordStageStep('job_2:research:2', 'model:1:aa', 'other job');
        expect(await store.findStageSteps('job_1:research:2')).toEqual(
          new Map([
            ['model:1:aa', kept[0]],
            ['tool:lookup:call_1', '{"fact":1}'],
          ]),
        );
        expect(await store.findStageSteps('job_3:research:2')).toEqual(new Map());
      });

      it("removes a delivery's steps when its completion is recorded, and ages out those of deliveries that never completed", async () => {
        await store.recordStageStep('job_4:research:2', 'model:1:aa', 'done');
        await store.recordStageStep('job_4:research:3', 'model:1:aa', 'never completed');
        await store.recordStageCompletion('job_4:research:2', stageResult('brief'));
        expect(await store.findStageSteps('job_4:research:2')).toEqual(new Map());
        // The completion still answers a retried attempt; the other delivery keeps its steps.
        expect(await store.findStageCompletion('job_4:research:2')).toEqual(stageResult('brief'));
        expect(await store.findStageSteps('job_4:research:3')).toEqual(new Map([['model:1:aa', 'never completed']]));

        // State kept while a job waits for a human is no delivery's steps: it outlives any retention.
        const waiting = `${WAITING_STEPS_PREFIX}a2a-input:job_4:research`;
        await store.recordStageStep(waiting, 'asks:task-1', '{"task_id":"task-1"}');

        expect(await store.pruneStageSteps(new Date(Date.now() - 60_000))).toBe(0);
        expect(await store.findStageSteps('job_4:research:3')).toHaveProperty('size', 1);
        expect(await store.pruneStageSteps(new Date(Date.now() + 60_000))).toBeGreaterThanOrEqual(1);
        expect(await store.findStageSteps('job_4:research:3')).toEqual(new Map());
        expect(await store.findStageSteps(waiting)).toHaveProperty('size', 1);
      });

      it('records which job and stage produced an artifact: the same bytes are evidence only for that job', async () => {
        const result = stageResult('first');
        await store.recordStageCompletion('job_1:draft:3', result, {
          job_id: 'job_1',
          stage: 'draft',
          delivery_sha: 'a'.repeat(64),
          package_sha: 'b'.repeat(64),
        });
        expect(await store.findRecordedArtifacts('job_1', result.artifact.uri)).toEqual([{ stage: 'draft', result }]);
        expect(await store.findRecordedArtifacts('job_2', result.artifact.uri)).toEqual([]);
        expect(await store.findStageRecord('job_1:draft:3')).toEqual({
          result,
          delivery_sha: 'a'.repeat(64),
          package_sha: 'b'.repeat(64),
        });
      });

      it('applies the same CRM write issued 5 times concurrently once, and returns one receipt', async () => {
        const receipts = await Promise.all(Array.from({ length: 5 }, () => store.patchCrmOnce(KEY, patch)));
        expect(new Set(receipts.map((r) => JSON.stringify(r))).size).toBe(1);
        expect(receipts[0]).toMatchObject({
          idempotency_key: KEY,
          system: 'crm',
          ticket_id: 'tkt_1',
          status: 'created',
        });
        const { idempotency_key, record_id, note_hash, written_at } = receipts[0]!;
        // The CRM write is a row of the generic writes: its system, what it touched, the note's hash.
        expect(await store.listWrites('job_1')).toEqual([
          {
            write_key: idempotency_key,
            system: 'crm',
            reference: record_id,
            payload_hash: note_hash,
            status: 'created',
            written_at,
          },
        ]);
        expect(await store.getCrmTicket('tkt_1')).toEqual({ ...patch, revision: 1, updated_by: KEY });
      });

      it('writes once per key to any system: 5 concurrent calls, one row, its receipt naming that system', async () => {
        const write = {
          key: 'job_1:payout:payout.v1',
          system: 'payments',
          reference: 'payouts/E-1',
          payload: '{"amount":42}',
        };
        const receipts = await Promise.all(Array.from({ length: 5 }, () => store.writeOnce(write)));
        const created = receipts.filter((r) => r.status === 'created');
        expect(created).toHaveLength(1);
        expect(created[0]).toMatchObject({
          write_key: write.key,
          system: 'payments',
          reference: 'payouts/E-1',
          payload_hash: `sha256:${sha256Hex(write.payload)}`,
        });
        // Every other call answers the first write's receipt as existing, whatever it asked.
        for (const r of receipts)
          expect(r).toEqual({ ...created[0], status: r === created[0] ? 'created' : 'existing' });
        expect((await store.writeOnce({ ...write, payload: '{"amount":43}' })).payload_hash).toBe(
          created[0]!.payload_hash,
        );
        expect(await store.listWrites('job_1')).toEqual([created[0]]);
        expect(await store.findWrite(write.key)).toEqual(created[0]);
        expect(await store.findWrite('job_1:payout:other.v1')).toBeNull();
        await expect(store.writeOnce({ ...write, key: 'job_1:payout' })).rejects.toThrow(
          new TypeError('idempotency key "job_1:payout" is not job_id:stage:artifact_type'),
        );
      });

      it('applies one write once when 5 separate connections (worker processes) race on it', async () => {
        const config = await backend.freshConfig();
        const stores = await Promise.all(Array.from({ length: 5 }, () => openStore(config)));
        try {
          const receipts = await Promise.all(stores.map((s) => s.patchCrmOnce(KEY, patch)));
          expect(new Set(receipts.map((r) => JSON.stringify(r))).size).toBe(1);
          expect(await stores[0]!.listWrites('job_1')).toHaveLength(1);
          expect((await stores[0]!.getCrmTicket('tkt_1'))?.revision).toBe(1);
        } finally {
          await Promise.all(stores.map((s) => s.close()));
        }
      });

      it('returns the first receipt for a retried key even when the patch differs, and leaves the CRM alone', async () => {
        const first = await store.patchCrmOnce(KEY, patch);
        const retried = await store.patchCrmOnce(KEY, { ...patch, note: 'a different note' });
        expect(retried).toEqual(first);
        expect((await store.getCrmTicket('tkt_1'))?.note).toBe(patch.note);
      });

      it('keys writes per job: another job updates the same record and says what changed', async () => {
        await store.patchCrmOnce(KEY, patch);
        const same = await store.patchCrmOnce('job_2:writeback:receipt.v1', patch);
        const changed = await store.patchCrmOnce('job_3:writeback:receipt.v1', { ...patch, status: 'needs_human' });
        expect(same.status).toBe('unchanged');
        expect(changed.status).toBe('updated');
        expect(await store.getCrmTicket('tkt_1')).toMatchObject({
          status: 'needs_human',
          revision: 2,
          updated_by: 'job_3:writeback:receipt.v1',
        });
        expect(await store.listWrites('job_2')).toHaveLength(1);
      });

      it('refuses a malformed idempotency key before writing anything', async () => {
        await expect(store.patchCrmOnce('job_1:writeback', patch)).rejects.toThrow(
          new TypeError('idempotency key "job_1:writeback" is not job_id:stage:artifact_type'),
        );
        await expect(store.patchCrmOnce('job:1:writeback:receipt.v1', patch)).rejects.toThrow(
          new TypeError('idempotency key "job:1:writeback:receipt.v1" is not job_id:stage:artifact_type'),
        );
        expect(await store.getCrmTicket('tkt_1')).toBeNull();
      });

      it("lists a customer's CRM tickets, most recently changed first, leaving out the one asked to", async () => {
        const write = async (job: string, ticket_id: string, customer_id: string, note: string) => {
          await store.patchCrmOnce(`${job}:writeback:receipt.v1`, { ticket_id, customer_id, status: 'triaged', note });
          // Distinct change times, so the order under test is not a tie broken by ticket id.
          await new Promise((resolve) => setTimeout(resolve, 5));
        };
        await write('job_1', 'tkt_1', 'cus_9', 'first');
        await write('job_2', 'tkt_2', 'cus_9', 'second');
        await write('job_3', 'tkt_3', 'cus_other', 'not hers');
        await write('job_4', 'tkt_1', 'cus_9', 'first, revised');

        const history = await store.listCustomerTickets('cus_9', 10);
        expect(history.map((t) => [t.ticket_id, t.note, t.revision])).toEqual([
          ['tkt_1', 'first, revised', 2],
          ['tkt_2', 'second', 1],
        ]);
        expect(history.every((t) => !Number.isNaN(Date.parse(t.updated_at)) && t.updated_at.endsWith('Z'))).toBe(true);
        expect(Date.parse(history[0]!.updated_at)).toBeGreaterThan(Date.parse(history[1]!.updated_at));
        expect((await store.listCustomerTickets('cus_9', 1)).map((t) => t.ticket_id)).toEqual(['tkt_1']);
        expect((await store.listCustomerTickets('cus_9', 10, 'tkt_1')).map((t) => t.ticket_id)).toEqual(['tkt_2']);
        expect(await store.listCustomerTickets('cus_nobody', 10)).toEqual([]);
      });

      it('loads the help-center corpus idempotently and tracks edits and removals', async () => {
        const first = await loadHelpCenter(store);
        expect(first.inserted).toBeGreaterThanOrEqual(60);
        expect(await loadHelpCenter(store)).toEqual({ inserted: 0, updated: 0, unchanged: first.inserted, deleted: 0 });

        const chunk = (key: string, text: string): HelpChunk => ({
          key,
          article_slug: 'x',
          title: 'X',
          tags: '',
          position: 1,
          text,
        });
        expect(await store.syncHelpCenter([chunk('x.1', 'alpha'), chunk('x.2', 'beta')])).toEqual({
          inserted: 2,
          updated: 0,
          unchanged: 0,
          deleted: first.inserted,
        });
        expect(await store.syncHelpCenter([chunk('x.1', 'gamma')])).toEqual({
          inserted: 0,
          updated: 1,
          unchanged: 0,
          deleted: 1,
        });
        expect((await store.searchHelpCenter(['gamma'], 5)).map((h) => h.key)).toEqual(['x.1']);
        expect(await store.searchHelpCenter(['alpha'], 5)).toEqual([]);
      });

      describe('retrieval ranking on the shipped corpus', () => {
        beforeEach(async () => {
          await loadHelpCenter(store);
        });

        it.each([
          ['How do I get a refund for my annual plan?', 'refund-policy'],
          ['I lost my phone and my 2FA codes, how can I sign in?', 'lost-2fa-device'],
          ['The API keeps answering 429 Too Many Requests', 'api-rate-limits'],
          ['How can I export my orders to CSV?', 'export-your-data'],
          ['My parcel arrived damaged, can I claim?', 'lost-or-damaged-parcels'],
          ['I forgot my password and the reset email never came', 'reset-password'],
          ['How do I cancel my subscription?', 'change-or-cancel-plan'],
          ['Our webhook endpoint was disabled', 'webhooks'],
        ])('%s → %s first', async (question, article) => {
          const hits = await store.searchHelpCenter(searchTerms(question), 4);
          expect(hits[0]?.key.startsWith(`${article}.`)).toBe(true);
          expect(hits.map((h) => h.score)).toEqual([...hits.map((h) => h.score)].sort((a, b) => b - a));
        });

        it('finds nothing for a question the corpus does not cover', async () => {
          expect(await store.searchHelpCenter(searchTerms('What is the weather like on Mars tomorrow?'), 4)).toEqual(
            [],
          );
          expect(await store.searchHelpCenter([], 4)).toEqual([]);
        });

        it('treats query syntax as plain words, never as operators', async () => {
          const hostile = [
            '"refund',
            'NEAR(refund',
            'title:refund',
            'refund*',
            "refund'); DROP TABLE writes;--",
            'refund | plan',
            '!',
            '&&',
          ];
          expect(await store.searchHelpCenter(hostile, 4)).toEqual([]);
          expect((await store.searchHelpCenter(['REFUND'], 1))[0]?.key).toMatch(/^refund-policy\./);
        });
      });
    },
  );
}
