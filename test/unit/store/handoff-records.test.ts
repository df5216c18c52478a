import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { HandoffAuditRow, HandoffRecord, HandoffTransitionError, type HandoffBeginInput } from '../../../contracts';
import { handoffRecordId, openStore, type Store } from '../../../src/worker/store';
import { openFresh, storeBackends } from '../../helpers/store-backends';

const input = (over: Partial<HandoffBeginInput> = {}): HandoffBeginInput => ({
  workspace: 'acme',
  project: 'support',
  job_id: 'tkt_1',
  summary: 'Customer asks for a refund past the window; the policy chunk did not answer it.',
  open_questions: ['customer timezone unknown'],
  next_steps: ['confirm the order date', 'ask billing about an exception'],
  created_by: 'rail',
  ...over,
});

async function refusal(promise: Promise<unknown>): Promise<HandoffTransitionError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(HandoffTransitionError);
  return error as HandoffTransitionError;
}

for (const backend of storeBackends()) {
  describe.skipIf(backend.skip !== null)(
    `handoff records on ${backend.name}${backend.skip ? ` (skipped: ${backend.skip})` : ''}`,
    () => {
      let store: Store;
      beforeEach(async () => {
        store = await openFresh(backend);
      });
      afterEach(async () => {
        await store.close();
      });

      it('begins an open record with an id made from its key, and reads it back', async () => {
        const record = await store.beginHandoff(input({ owner: 'ana' }), 'tkt_1:escalation:0');
        expect(HandoffRecord.parse(record)).toEqual(record);
        expect(record).toMatchObject({
          id: handoffRecordId('tkt_1:escalation:0'),
          state: 'open',
          owner: 'ana',
          created_by: 'rail',
          accepted_by: null,
          close_reason: null,
        });
        expect(record.next_steps).toEqual(['confirm the order date', 'ask billing about an exception']);
        expect(await store.getHandoff(record.id)).toEqual(record);
        expect(await store.getHandoff(handoffRecordId('other'))).toBeNull();
        expect((await store.beginHandoff(input(), 'tkt_1:escalation:1')).owner).toBeNull();
      });

      it('lists a project’s records: open by default, newest first, scoped, filtered by state, limited', async () => {
        const a = await store.beginHandoff(input({ job_id: 'tkt_a' }), 'tkt_a:escalation:0');
        const b = await store.beginHandoff(input({ job_id: 'tkt_b' }), 'tkt_b:escalation:0');
        const c = await store.beginHandoff(input({ job_id: 'tkt_c' }), 'tkt_c:escalation:0');
        await store.beginHandoff(input({ project: 'billing' }), 'tkt_d:escalation:0');
        await store.beginHandoff(input({ workspace: 'globex' }), 'tkt_e:escalation:0');
        await store.cancelHandoff(b.id, 'ana', 'cancel-b');
        const ids = (rs: HandoffRecord[]) => rs.map((r) => r.id);
        expect(ids(await store.listHandoffs({ workspace: 'acme', project: 'support' }))).toEqual([c.id, a.id]);
        expect(ids(await store.listHandoffs({ workspace: 'acme', project: 'support', limit: 1 }))).toEqual([c.id]);
        expect(ids(await store.listHandoffs({ workspace: 'acme', project: 'support', state: 'cancelled' }))).toEqual([
          b.id,
        ]);
        expect(await store.listHandoffs({ workspace: 'acme', project: 'support', state: 'closed' })).toEqual([]);
        expect(await store.listHandoffs({ workspace: 'acme', project: 'nothing' })).toEqual([]);
        expect(await store.listHandoffs({ workspace: 'globex', project: 'support' })).toHaveLength(1);
      });

      it('a list is never stale: a write on this connection or another one (another process) shows in the next list', async () => {
        const config = await backend.freshConfig();
        const [mine, other] = [await openStore(config), await openStore(config)];
        try {
          const list = () => mine.listHandoffs({ workspace: 'acme', project: 'support' });
          const a = await mine.beginHandoff(input({ job_id: 'tkt_a' }), 'tkt_a:escalation:1');
          expect((await list()).map((r) => r.id)).toEqual([a.id]);
          const b = await other.beginHandoff(input({ job_id: 'tkt_b' }), 'tkt_b:escalation:1');
          expect((await list()).map((r) => r.id)).toEqual([b.id, a.id]);
          await other.acceptHandoff(a.id, 'ana', 'accept-a');
          expect((await list()).map((r) => r.id)).toEqual([b.id]);
          await mine.cancelHandoff(b.id, 'ana', 'cancel-b');
          expect(await list()).toEqual([]);
          // What a caller does to a listed record is not what the next caller is served.
          await mine.beginHandoff(input({ job_id: 'tkt_c' }), 'tkt_c:escalation:1');
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
        const mine = await store.beginHandoff(input({ job_id: 'tkt_m', owner: 'ana' }), 'tkt_m:escalation:1');
        for (let n = 0; n < 3; n++)
          await store.beginHandoff(input({ job_id: `tkt_o${n}`, owner: 'bob' }), `tkt_o${n}:escalation:1`);
        const open = await store.beginHandoff(input({ job_id: 'tkt_u' }), 'tkt_u:escalation:1');
        const ids = (rs: HandoffRecord[]) => rs.map((r) => r.id);
        expect(ids(await store.listHandoffs({ workspace: 'acme', project: 'support', visible_to: 'ana' }))).toEqual([
          open.id,
          mine.id,
        ]);
        // Newer records of someone else do not push ana's own out of a short page.
        expect(
          ids(await store.listHandoffs({ workspace: 'acme', project: 'support', visible_to: 'ana', limit: 2 })),
        ).toEqual([open.id, mine.id]);
        expect(await store.listHandoffs({ workspace: 'acme', project: 'support', visible_to: 'bob' })).toHaveLength(4);
        expect(await store.listHandoffs({ workspace: 'acme', project: 'support' })).toHaveLength(5);
      });

      it('walks open → accepted → closed, with an audit row per transition in order', async () => {
        const { id } = await store.beginHandoff(input(), 'tkt_1:escalation:0');
        const accepted = await store.acceptHandoff(id, 'ana', 'accept-1');
        expect(accepted).toMatchObject({ state: 'accepted', accepted_by: 'ana' });
        expect(accepted.accepted_at).not.toBeNull();
        const closed = await store.closeHandoff(id, 'decided', 'tkt_1:close');
        expect(closed).toMatchObject({ state: 'closed', accepted_by: 'ana', close_reason: 'decided' });
        expect(await store.getHandoff(id)).toEqual(closed);
        const audit = await store.handoffAudit(id);
        for (const row of audit) expect(HandoffAuditRow.parse(row)).toEqual(row);
        expect(audit.map((r) => [r.seq, r.transition, r.actor, r.idempotency_key, r.detail])).toEqual([
          [1, 'begin', 'rail', 'tkt_1:escalation:0', { from: null, to: 'open' }],
          [2, 'accept', 'ana', 'accept-1', { from: 'open', to: 'accepted' }],
          [3, 'close', null, 'tkt_1:close', { from: 'accepted', to: 'closed', close_reason: 'decided' }],
        ]);
        expect(audit[1]!.at).toBe(accepted.accepted_at);
        expect(audit[2]!.at).toBe(closed.closed_at);
        expect(await store.handoffAudit(handoffRecordId('nope'))).toEqual([]);
      });

      it('cancels an open or an accepted record, and closes an open one', async () => {
        const open = await store.beginHandoff(input(), 'k:escalation:0');
        expect(await store.cancelHandoff(open.id, 'bo', 'c1')).toMatchObject({
          state: 'cancelled',
          cancelled_by: 'bo',
          accepted_by: null,
        });
        const taken = await store.beginHandoff(input(), 'k:escalation:1');
        await store.acceptHandoff(taken.id, 'ana', 'a2');
        expect(await store.cancelHandoff(taken.id, 'ana', 'c2')).toMatchObject({
          state: 'cancelled',
          cancelled_by: 'ana',
          accepted_by: 'ana',
        });
        const timedOut = await store.beginHandoff(input(), 'k:escalation:2');
        expect(await store.closeHandoff(timedOut.id, 'timed_out', 'close-3')).toMatchObject({
          state: 'closed',
          close_reason: 'timed_out',
          accepted_by: null,
        });
      });

      it('refuses, with a typed error and no change: accept after cancel, accept by another user, cancel after close, unknown record', async () => {
        const cancelled = await store.beginHandoff(input(), 'k:escalation:0');
        await store.cancelHandoff(cancelled.id, 'bo', 'c0');
        const afterCancel = await refusal(store.acceptHandoff(cancelled.id, 'ana', 'a0'));
        expect(afterCancel.code).toBe('illegal_transition');
        expect(afterCancel.message).toBe(`cannot accept handoff record ${cancelled.id}: it is already cancelled`);

        const taken = await store.beginHandoff(input(), 'k:escalation:1');
        const accepted = await store.acceptHandoff(taken.id, 'ana', 'a1');
        expect((await refusal(store.acceptHandoff(taken.id, 'bo', 'a1-bo'))).code).toBe('conflict');
        expect(await store.getHandoff(taken.id)).toEqual(accepted);
        // The same user accepting again (a new key) is a success that changes nothing.
        expect(await store.acceptHandoff(taken.id, 'ana', 'a1-again')).toEqual(accepted);
        expect(await store.handoffAudit(taken.id)).toHaveLength(2);

        const closed = await store.beginHandoff(input(), 'k:escalation:2');
        const closedRecord = await store.closeHandoff(closed.id, 'job_cancelled', 'close-2');
        expect((await refusal(store.cancelHandoff(closed.id, 'ana', 'c2'))).code).toBe('illegal_transition');
        expect((await refusal(store.closeHandoff(closed.id, 'decided', 'close-2b'))).code).toBe('illegal_transition');
        expect(await store.getHandoff(closed.id)).toEqual(closedRecord);
        expect(await store.handoffAudit(closed.id)).toHaveLength(2);
        expect(await store.handoffAudit(cancelled.id)).toHaveLength(2);

        expect((await refusal(store.acceptHandoff(handoffRecordId('missing'), 'ana', 'a-missing'))).code).toBe(
          'not_found',
        );
      });

      it('repeats a keyed write as its first outcome, with no extra record or audit row', async () => {
        const first = await store.beginHandoff(input(), 'tkt_1:escalation:0');
        const again = await store.beginHandoff(input({ summary: 'a retry with other words' }), 'tkt_1:escalation:0');
        expect(again).toEqual(first);
        expect(await store.listHandoffs({ workspace: 'acme', project: 'support' })).toHaveLength(1);

        const accepted = await store.acceptHandoff(first.id, 'ana', 'accept-1');
        const closed = await store.closeHandoff(first.id, 'decided', 'close-1');
        // The accept's retry, after the close, still answers what the accept did.
        expect(await store.acceptHandoff(first.id, 'ana', 'accept-1')).toEqual(accepted);
        expect(await store.closeHandoff(first.id, 'decided', 'close-1')).toEqual(closed);
        expect(await store.beginHandoff(input(), 'tkt_1:escalation:0')).toEqual(first);
        expect(await store.handoffAudit(first.id)).toHaveLength(3);

        // A key spent on one write is refused for another.
        const other = await store.beginHandoff(input(), 'tkt_1:escalation:1');
        expect((await refusal(store.cancelHandoff(other.id, 'ana', 'accept-1'))).code).toBe('key_reused');
        expect((await refusal(store.beginHandoff(input(), 'accept-1'))).code).toBe('key_reused');
        expect((await store.getHandoff(other.id))?.state).toBe('open');
      });

      it('lets exactly one of two concurrent accepts by different users win', async () => {
        for (let n = 0; n < 5; n++) {
          const { id } = await store.beginHandoff(input(), `tkt_1:escalation:${n}`);
          const outcomes = await Promise.allSettled([
            store.acceptHandoff(id, 'ana', `ana-${n}`),
            store.acceptHandoff(id, 'bo', `bo-${n}`),
          ]);
          const won = outcomes.filter((o) => o.status === 'fulfilled');
          const lost = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected');
          expect(won).toHaveLength(1);
          expect(lost).toHaveLength(1);
          expect((lost[0]!.reason as HandoffTransitionError).code).toBe('conflict');
          const winner = (won[0] as PromiseFulfilledResult<HandoffRecord>).value;
          expect(await store.getHandoff(id)).toEqual(winner);
          expect(await store.handoffAudit(id)).toHaveLength(2);
        }
      });

      it('closes a record on a decision only while it is open to the decider: the decider holds it, the audit names them and the action', async () => {
        const open = await store.beginHandoff(input(), 'tkt_1:escalation:0');
        const decided = await store.closeHandoff(open.id, 'decided', 'close-0', { actor: 'ana', action: 'top_up' });
        expect(decided).toMatchObject({
          state: 'closed',
          close_reason: 'decided',
          accepted_by: 'ana',
          accepted_at: decided.closed_at,
        });
        expect((await store.handoffAudit(open.id)).at(-1)).toMatchObject({
          transition: 'close',
          actor: 'ana',
          detail: { from: 'open', to: 'closed', close_reason: 'decided', action: 'top_up' },
        });
        // The same key again: the first outcome, rebuilt from the audit trail.
        expect(await store.closeHandoff(open.id, 'decided', 'close-0', { actor: 'ana', action: 'top_up' })).toEqual(
          decided,
        );
        expect((await refusal(store.cancelHandoff(open.id, 'bo', 'cancel-late'))).code).toBe('illegal_transition');

        const taken = await store.beginHandoff(input(), 'tkt_1:escalation:1');
        await store.acceptHandoff(taken.id, 'bo', 'accept-bo');
        expect(
          (await refusal(store.closeHandoff(taken.id, 'decided', 'close-1', { actor: 'ana', action: 'approve' }))).code,
        ).toBe('conflict');
        expect(
          await store.closeHandoff(taken.id, 'decided', 'close-1', { actor: 'bo', action: 'approve' }),
        ).toMatchObject({ state: 'closed', accepted_by: 'bo' });

        const given = await store.beginHandoff(input(), 'tkt_1:escalation:2');
        await store.cancelHandoff(given.id, 'bo', 'cancel-bo');
        expect(
          (await refusal(store.closeHandoff(given.id, 'decided', 'close-2', { actor: 'ana', action: 'reject' }))).code,
        ).toBe('illegal_transition');
        expect(await store.getHandoff(given.id)).toMatchObject({
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
            const { id } = await here.beginHandoff(input(), `tkt_1:escalation:${n}`);
            const [decide, cancel] = await Promise.allSettled([
              here.closeHandoff(id, 'decided', `close-${n}`, { actor: 'ana', action: 'top_up' }),
              (n % 2 ? other : here).cancelHandoff(id, 'bo', `cancel-${n}`),
            ]);
            expect([decide.status, cancel.status].sort()).toEqual(['fulfilled', 'rejected']);
            const record = (await here.getHandoff(id))!;
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
            expect(await here.handoffAudit(id)).toHaveLength(2);
          }
        } finally {
          await Promise.all([other.close(), here.close()]);
        }
      });

      it('keeps one record and one accept when separate connections race on the same keys and the same record', async () => {
        const config = await backend.freshConfig();
        const stores = await Promise.all(Array.from({ length: 4 }, () => openStore(config)));
        try {
          const begun = await Promise.all(stores.map((s) => s.beginHandoff(input(), 'tkt_1:escalation:0')));
          expect(new Set(begun.map((r) => JSON.stringify(r))).size).toBe(1);
          const id = begun[0]!.id;
          const outcomes = await Promise.allSettled(
            stores.map((s, i) => s.acceptHandoff(id, `user${i}`, `accept-${i}`)),
          );
          expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
          const repeats = await Promise.all(stores.map((s) => s.cancelHandoff(id, 'ana', 'cancel-once')));
          expect(new Set(repeats.map((r) => JSON.stringify(r))).size).toBe(1);
          expect((await stores[0]!.handoffAudit(id)).map((r) => r.transition)).toEqual(['begin', 'accept', 'cancel']);
        } finally {
          await Promise.all(stores.map((s) => s.close()));
        }
      });
    },
  );
}
