import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  EscalationRecordAuditRow,
  EscalationRecord,
  EscalationRecordTransitionError,
  type EscalationRecordBeginInput,
} from '../../../contracts';
import { escalationRecordId, openStore, type Store } from '../../../src/worker/store';
import { openFresh, storeBackends } from '../../helpers/store-backends';

const input = (over: Partial<EscalationRecordBeginInput> = {}): EscalationRecordBeginInput => ({
  workspace: 'acme',
  project: 'support',
  job_id: 'tkt_1',
  summary: 'Customer asks for a refund past the window; the policy chunk did not answer it.',
  open_questions: ['customer timezone unknown'],
  next_steps: ['confirm the order date', 'ask billing about an exception'],
  created_by: 'rail',
  ...over,
});

async function refusal(promise: Promise<unknown>): Promise<EscalationRecordTransitionError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(EscalationRecordTransitionError);
  return error as EscalationRecordTransitionError;
}

for (const backend of storeBackends()) {
  describe.skipIf(backend.skip !== null)(
    `escalation records on ${backend.name}${backend.skip ? ` (skipped: ${backend.skip})` : ''}`,
    () => {
      let store: Store;
      beforeEach(async () => {
        store = await openFresh(backend);
      });
      afterEach(async () => {
        await store.close();
      });

      it('begins an open record with an id made from its key, and reads it back', async () => {
        const record = await store.beginEscalationRecord(input({ owner: 'ana' }), 'tkt_1:escalation:0');
        expect(EscalationRecord.parse(record)).toEqual(record);
        expect(record).toMatchObject({
          id: escalationRecordId('tkt_1:escalation:0'),
          state: 'open',
          owner: 'ana',
          created_by: 'rail',
          accepted_by: null,
          close_reason: null,
        });
        expect(record.next_steps).toEqual(['confirm the order date', 'ask billing about an exception']);
        expect(await store.getEscalationRecord(record.id)).toEqual(record);
        expect(await store.getEscalationRecord(escalationRecordId('other'))).toBeNull();
        expect((await store.beginEscalationRecord(input(), 'tkt_1:escalation:1')).owner).toBeNull();
      });

      it('lists a project’s records: open by default, newest first, scoped, filtered by state, limited', async () => {
        const a = await store.beginEscalationRecord(input({ job_id: 'tkt_a' }), 'tkt_a:escalation:0');
        const b = await store.beginEscalationRecord(input({ job_id: 'tkt_b' }), 'tkt_b:escalation:0');
        const c = await store.beginEscalationRecord(input({ job_id: 'tkt_c' }), 'tkt_c:escalation:0');
        await store.beginEscalationRecord(input({ project: 'billing' }), 'tkt_d:escalation:0');
        await store.beginEscalationRecord(input({ workspace: 'globex' }), 'tkt_e:escalation:0');
        await store.cancelEscalationRecord(b.id, 'ana', 'cancel-b');
        const ids = (rs: EscalationRecord[]) => rs.map((r) => r.id);
        expect(ids(await store.listEscalationRecords({ workspace: 'acme', project: 'support' }))).toEqual([c.id, a.id]);
        expect(ids(await store.listEscalationRecords({ workspace: 'acme', project: 'support', limit: 1 }))).toEqual([
          c.id,
        ]);
        expect(
          ids(await store.listEscalationRecords({ workspace: 'acme', project: 'support', state: 'cancelled' })),
        ).toEqual([b.id]);
        expect(await store.listEscalationRecords({ workspace: 'acme', project: 'support', state: 'closed' })).toEqual(
          [],
        );
        expect(await store.listEscalationRecords({ workspace: 'acme', project: 'nothing' })).toEqual([]);
        expect(await store.listEscalationRecords({ workspace: 'globex', project: 'support' })).toHaveLength(1);
      });

      it('a list is never stale: a write on this connection or another one (another process) shows in the next list', async () => {
        const config = await backend.freshConfig();
        const [mine, other] = [await openStore(config), await openStore(config)];
        try {
          const list = () => mine.listEscalationRecords({ workspace: 'acme', project: 'support' });
          const a = await mine.beginEscalationRecord(input({ job_id: 'tkt_a' }), 'tkt_a:escalation:1');
          expect((await list()).map((r) => r.id)).toEqual([a.id]);
          const b = await other.beginEscalationRecord(input({ job_id: 'tkt_b' }), 'tkt_b:escalation:1');
          expect((await list()).map((r) => r.id)).toEqual([b.id, a.id]);
          await other.acceptEscalationRecord(a.id, 'ana', 'accept-a');
          expect((await list()).map((r) => r.id)).toEqual([b.id]);
          await mine.cancelEscalationRecord(b.id, 'ana', 'cancel-b');
          expect(await list()).toEqual([]);
          // What a caller does to a listed record is not what the next caller is served.
          await mine.beginEscalationRecord(input({ job_id: 'tkt_c' }), 'tkt_c:escalation:1');
          const [c] = await list();
          try {
            (c as { summary: string }).summary = 'changed';
          } catch {
            // A listing kept for the next caller is frozen.
          }
          expect((await list())[0]!.summary).toBe(input().summary);
        } finally {
          await mine.close();
          await other.close();
        }
      });

      it('lists what one user may see: unowned records and their own, the limit applied after the filter', async () => {
        const mine = await store.beginEscalationRecord(input({ job_id: 'tkt_m', owner: 'ana' }), 'tkt_m:escalation:1');
        for (let n = 0; n < 3; n++)
          await store.beginEscalationRecord(input({ job_id: `tkt_o${n}`, owner: 'bob' }), `tkt_o${n}:escalation:1`);
        const open = await store.beginEscalationRecord(input({ job_id: 'tkt_u' }), 'tkt_u:escalation:1');
        const ids = (rs: EscalationRecord[]) => rs.map((r) => r.id);
        expect(
          ids(await store.listEscalationRecords({ workspace: 'acme', project: 'support', visible_to: 'ana' })),
        ).toEqual([open.id, mine.id]);
        // Newer records of someone else do not push ana's own out of a short page.
        expect(
          ids(
            await store.listEscalationRecords({ workspace: 'acme', project: 'support', visible_to: 'ana', limit: 2 }),
          ),
        ).toEqual([open.id, mine.id]);
        expect(
          await store.listEscalationRecords({ workspace: 'acme', project: 'support', visible_to: 'bob' }),
        ).toHaveLength(4);
        expect(await store.listEscalationRecords({ workspace: 'acme', project: 'support' })).toHaveLength(5);
      });

      it('walks open → accepted → closed, with an audit row per transition in order', async () => {
        const { id } = await store.beginEscalationRecord(input(), 'tkt_1:escalation:0');
        const accepted = await store.acceptEscalationRecord(id, 'ana', 'accept-1');
        expect(accepted).toMatchObject({ state: 'accepted', accepted_by: 'ana' });
        expect(accepted.accepted_at).not.toBeNull();
        const closed = await store.closeEscalationRecord(id, 'decided', 'tkt_1:close');
        expect(closed).toMatchObject({ state: 'closed', accepted_by: 'ana', close_reason: 'decided' });
        expect(await store.getEscalationRecord(id)).toEqual(closed);
        const audit = await store.escalationRecordAudit(id);
        for (const row of audit) expect(EscalationRecordAuditRow.parse(row)).toEqual(row);
        expect(audit.map((r) => [r.seq, r.transition, r.actor, r.idempotency_key, r.detail])).toEqual([
          [1, 'begin', 'rail', 'tkt_1:escalation:0', { from: null, to: 'open' }],
          [2, 'accept', 'ana', 'accept-1', { from: 'open', to: 'accepted' }],
          [3, 'close', null, 'tkt_1:close', { from: 'accepted', to: 'closed', close_reason: 'decided' }],
        ]);
        expect(audit[1]!.at).toBe(accepted.accepted_at);
        expect(audit[2]!.at).toBe(closed.closed_at);
        expect(await store.escalationRecordAudit(escalationRecordId('nope'))).toEqual([]);
      });

      it('cancels an open or an accepted record, and closes an open one', async () => {
        const open = await store.beginEscalationRecord(input(), 'k:escalation:0');
        expect(await store.cancelEscalationRecord(open.id, 'bo', 'c1')).toMatchObject({
          state: 'cancelled',
          cancelled_by: 'bo',
          accepted_by: null,
        });
        const taken = await store.beginEscalationRecord(input(), 'k:escalation:1');
        await store.acceptEscalationRecord(taken.id, 'ana', 'a2');
        expect(await store.cancelEscalationRecord(taken.id, 'ana', 'c2')).toMatchObject({
          state: 'cancelled',
          cancelled_by: 'ana',
          accepted_by: 'ana',
        });
        const timedOut = await store.beginEscalationRecord(input(), 'k:escalation:2');
        expect(await store.closeEscalationRecord(timedOut.id, 'timed_out', 'close-3')).toMatchObject({
          state: 'closed',
          close_reason: 'timed_out',
          accepted_by: null,
        });
      });

      it('refuses, with a typed error and no change: accept after cancel, accept by another user, cancel after close, unknown record', async () => {
        const cancelled = await store.beginEscalationRecord(input(), 'k:escalation:0');
        await store.cancelEscalationRecord(cancelled.id, 'bo', 'c0');
        const afterCancel = await refusal(store.acceptEscalationRecord(cancelled.id, 'ana', 'a0'));
        expect(afterCancel.code).toBe('illegal_transition');
        expect(afterCancel.message).toBe(`cannot accept handoff record ${cancelled.id}: it is already cancelled`);

        const taken = await store.beginEscalationRecord(input(), 'k:escalation:1');
        const accepted = await store.acceptEscalationRecord(taken.id, 'ana', 'a1');
        expect((await refusal(store.acceptEscalationRecord(taken.id, 'bo', 'a1-bo'))).code).toBe('conflict');
        expect(await store.getEscalationRecord(taken.id)).toEqual(accepted);
        // The same user accepting again (a new key) is a success that changes nothing.
        expect(await store.acceptEscalationRecord(taken.id, 'ana', 'a1-again')).toEqual(accepted);
        expect(await store.escalationRecordAudit(taken.id)).toHaveLength(2);

        const closed = await store.beginEscalationRecord(input(), 'k:escalation:2');
        const closedRecord = await store.closeEscalationRecord(closed.id, 'job_cancelled', 'close-2');
        expect((await refusal(store.cancelEscalationRecord(closed.id, 'ana', 'c2'))).code).toBe('illegal_transition');
        expect((await refusal(store.closeEscalationRecord(closed.id, 'decided', 'close-2b'))).code).toBe(
          'illegal_transition',
        );
        expect(await store.getEscalationRecord(closed.id)).toEqual(closedRecord);
        expect(await store.escalationRecordAudit(closed.id)).toHaveLength(2);
        expect(await store.escalationRecordAudit(cancelled.id)).toHaveLength(2);

        expect(
          (await refusal(store.acceptEscalationRecord(escalationRecordId('missing'), 'ana', 'a-missing'))).code,
        ).toBe('not_found');
      });

      it('repeats a keyed write as its first outcome, with no extra record or audit row', async () => {
        const first = await store.beginEscalationRecord(input(), 'tkt_1:escalation:0');
        const again = await store.beginEscalationRecord(
          input({ summary: 'a retry with other words' }),
          'tkt_1:escalation:0',
        );
        expect(again).toEqual(first);
        expect(await store.listEscalationRecords({ workspace: 'acme', project: 'support' })).toHaveLength(1);

        const accepted = await store.acceptEscalationRecord(first.id, 'ana', 'accept-1');
        const closed = await store.closeEscalationRecord(first.id, 'decided', 'close-1');
        // The accept's retry, after the close, still answers what the accept did.
        expect(await store.acceptEscalationRecord(first.id, 'ana', 'accept-1')).toEqual(accepted);
        expect(await store.closeEscalationRecord(first.id, 'decided', 'close-1')).toEqual(closed);
        expect(await store.beginEscalationRecord(input(), 'tkt_1:escalation:0')).toEqual(first);
        expect(await store.escalationRecordAudit(first.id)).toHaveLength(3);

        // A key spent on one write is refused for another.
        const other = await store.beginEscalationRecord(input(), 'tkt_1:escalation:1');
        expect((await refusal(store.cancelEscalationRecord(other.id, 'ana', 'accept-1'))).code).toBe('key_reused');
        expect((await refusal(store.beginEscalationRecord(input(), 'accept-1'))).code).toBe('key_reused');
        expect((await store.getEscalationRecord(other.id))?.state).toBe('open');
      });

      it('lets exactly one of two concurrent accepts by different users win', async () => {
        for (let n = 0; n < 5; n++) {
          const { id } = await store.beginEscalationRecord(input(), `tkt_1:escalation:${n}`);
          const outcomes = await Promise.allSettled([
            store.acceptEscalationRecord(id, 'ana', `ana-${n}`),
            store.acceptEscalationRecord(id, 'bo', `bo-${n}`),
          ]);
          const won = outcomes.filter((o) => o.status === 'fulfilled');
          const lost = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected');
          expect(won).toHaveLength(1);
          expect(lost).toHaveLength(1);
          expect((lost[0]!.reason as EscalationRecordTransitionError).code).toBe('conflict');
          const winner = (won[0] as PromiseFulfilledResult<EscalationRecord>).value;
          expect(await store.getEscalationRecord(id)).toEqual(winner);
          expect(await store.escalationRecordAudit(id)).toHaveLength(2);
        }
      });

      it('closes a record on a decision only while it is open to the decider: the decider holds it, the audit names them and the action', async () => {
        const open = await store.beginEscalationRecord(input(), 'tkt_1:escalation:0');
        const decided = await store.closeEscalationRecord(open.id, 'decided', 'close-0', {
          actor: 'ana',
          action: 'top_up',
        });
        expect(decided).toMatchObject({
          state: 'closed',
          close_reason: 'decided',
          accepted_by: 'ana',
          accepted_at: decided.closed_at,
        });
        expect((await store.escalationRecordAudit(open.id)).at(-1)).toMatchObject({
          transition: 'close',
          actor: 'ana',
          detail: { from: 'open', to: 'closed', close_reason: 'decided', action: 'top_up' },
        });
        // The same key again: the first outcome, rebuilt from the audit trail.
        expect(
          await store.closeEscalationRecord(open.id, 'decided', 'close-0', { actor: 'ana', action: 'top_up' }),
        ).toEqual(decided);
        expect((await refusal(store.cancelEscalationRecord(open.id, 'bo', 'cancel-late'))).code).toBe(
          'illegal_transition',
        );

        const taken = await store.beginEscalationRecord(input(), 'tkt_1:escalation:1');
        await store.acceptEscalationRecord(taken.id, 'bo', 'accept-bo');
        expect(
          (
            await refusal(
              store.closeEscalationRecord(taken.id, 'decided', 'close-1', { actor: 'ana', action: 'approve' }),
            )
          ).code,
        ).toBe('conflict');
        expect(
          await store.closeEscalationRecord(taken.id, 'decided', 'close-1', { actor: 'bo', action: 'approve' }),
        ).toMatchObject({ state: 'closed', accepted_by: 'bo' });

        const given = await store.beginEscalationRecord(input(), 'tkt_1:escalation:2');
        await store.cancelEscalationRecord(given.id, 'bo', 'cancel-bo');
        expect(
          (
            await refusal(
              store.closeEscalationRecord(given.id, 'decided', 'close-2', { actor: 'ana', action: 'reject' }),
            )
          ).code,
        ).toBe('illegal_transition');
        expect(await store.getEscalationRecord(given.id)).toMatchObject({
          state: 'cancelled',
          cancelled_by: 'bo',
          accepted_by: null,
          close_reason: null,
        });
      });

      it('of a decision’s close and a cancel at once, exactly one commits, on one connection or two', async () => {
        const config = await backend.freshConfig();
        const other = await openStore(config);
        const here = await openStore(config);
        try {
          for (let n = 0; n < 10; n++) {
            const { id } = await here.beginEscalationRecord(input(), `tkt_1:escalation:${n}`);
            const [decide, cancel] = await Promise.allSettled([
              here.closeEscalationRecord(id, 'decided', `close-${n}`, { actor: 'ana', action: 'top_up' }),
              (n % 2 ? other : here).cancelEscalationRecord(id, 'bo', `cancel-${n}`),
            ]);
            expect([decide.status, cancel.status].sort()).toEqual(['fulfilled', 'rejected']);
            const record = (await here.getEscalationRecord(id))!;
            if (decide.status === 'fulfilled')
              expect(record).toMatchObject({
                state: 'closed',
                close_reason: 'decided',
                accepted_by: 'ana',
                cancelled_by: null,
              });
            else
              expect(record).toMatchObject({
                state: 'cancelled',
                cancelled_by: 'bo',
                accepted_by: null,
                close_reason: null,
              });
            expect(await here.escalationRecordAudit(id)).toHaveLength(2);
          }
        } finally {
          await Promise.all([other.close(), here.close()]);
        }
      });

      it('keeps one record and one accept when separate connections race on the same keys and the same record', async () => {
        const config = await backend.freshConfig();
        const stores = await Promise.all(Array.from({ length: 4 }, () => openStore(config)));
        try {
          const begun = await Promise.all(stores.map((s) => s.beginEscalationRecord(input(), 'tkt_1:escalation:0')));
          expect(new Set(begun.map((r) => JSON.stringify(r))).size).toBe(1);
          const id = begun[0]!.id;
          const outcomes = await Promise.allSettled(
            stores.map((s, i) => s.acceptEscalationRecord(id, `user${i}`, `accept-${i}`)),
          );
          expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
          const repeats = await Promise.all(stores.map((s) => s.cancelEscalationRecord(id, 'ana', 'cancel-once')));
          expect(new Set(repeats.map((r) => JSON.stringify(r))).size).toBe(1);
          expect((await stores[0]!.escalationRecordAudit(id)).map((r) => r.transition)).toEqual([
            'begin',
            'accept',
            'cancel',
          ]);
        } finally {
          await Promise.all(stores.map((s) => s.close()));
        }
      });
    },
  );
}
