/**
 * Races on one escalated job's escalation record over HTTP, on both stores: decisions while the job
 * ends answer 409, never 5xx; a decision and a cancel exclude each other; and a 20-way
 * decide/cancel/accept race always ends with exactly one outcome, which the record tells.
 * HANDRAIL_RACE_ROUNDS sets the 20-way race's rounds per store (3 by default).
 */
import { describe, expect, it } from 'vitest';
import { DecisionRefusedError, decide } from '../../src/operator/client';
import { acksQuery, statusQuery } from '../../workflows/definitions';
import { useRailApi, type Reply } from '../helpers/handoffs-rail-api';
import { storeBackends } from '../helpers/store-backends';

const USERS = Array.from({ length: 20 }, (_, i) => `u${String(i).padStart(2, '0')}`);
const TOKENS: Record<string, string> = Object.fromEntries([...USERS, 'ops'].map((name) => [name, `tok-${name}-race`]));
const ROUNDS = Number(process.env.HANDRAIL_RACE_ROUNDS ?? 3);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

for (const backend of storeBackends()) {
  describe.skipIf(backend.skip !== null)(
    `escalation record races on ${backend.name}${backend.skip ? ` (skipped: ${backend.skip})` : ''}`,
    () => {
      const api = useRailApi(backend, TOKENS, 'ops');
      const { call, escalated } = api;
      const decideOver = (id: string, as: string, body: unknown) => call('POST', `/handoffs/${id}/decide`, as, body);

      it('twelve deciders rejecting one record while its job ends: one 200, every other answer 409, over HTTP and the client API', async () => {
        for (let round = 0; round < 3; round++) {
          const { handle, record } = await escalated();
          const overHttp: Reply[] = [];
          const overClient: unknown[] = [];
          await Promise.all(
            USERS.slice(0, 12).map(async (as, i) => {
              for (let n = 0; n < 6; n++) {
                if (i % 2 === 0) overHttp.push(await decideOver(record.id, as, { action: 'reject' }));
                else
                  overClient.push(
                    await decide(api.rail.client, record.job_id, { action: 'reject', actor: as }).catch(
                      (e: unknown) => e,
                    ),
                  );
              }
            }),
          );
          expect((await handle.result()).status).toBe('rejected');
          const statuses = overHttp.map((r) => r.status);
          expect(
            statuses.filter((s) => s >= 500),
            JSON.stringify(overHttp.filter((r) => r.status >= 500)),
          ).toEqual([]);
          const won = statuses.filter((s) => s === 200).length + overClient.filter((r) => !(r instanceof Error)).length;
          expect(won).toBe(1);
          expect(statuses.filter((s) => s !== 200 && s !== 409)).toEqual([]);
          for (const reply of overHttp.filter((r) => r.status === 409)) expect(reply.body.message).toMatch(/\S/);
          const refusedOtherwise = overClient.filter((r) => r instanceof Error && !(r instanceof DecisionRefusedError));
          expect(refusedOtherwise.map(String)).toEqual([]);
        }
      });

      it('a decision and a cancel at once: one of them wins, the other is 409, and the record and the job agree on which', async () => {
        for (let round = 0; round < 6; round++) {
          const { handle, record } = await escalated();
          // The cancel lands 0–25 ms after the decision is sent: inside the decision's way to the job.
          const [decided, cancelled] = await Promise.all([
            decideOver(record.id, 'u00', { action: 'top_up', usd: 1 }),
            sleep(round * 5).then(() => call('POST', `/handoffs/${record.id}/cancel`, 'u01')),
          ]);
          expect(
            [decided.status, cancelled.status].sort(),
            JSON.stringify({ decided: decided.body, cancelled: cancelled.body }),
          ).toEqual([200, 409]);
          const now = (await api.rail.store.getEscalationRecord(record.id))!;
          const humanAcks = (await handle.query(acksQuery)).filter((a) => a.stage === 'human' && a.actor);
          if (decided.status === 200) {
            expect(now).toMatchObject({
              state: 'closed',
              close_reason: 'decided',
              accepted_by: 'u00',
              cancelled_by: null,
            });
            expect(humanAcks.map((a) => a.actor)).toEqual(['u00']);
          } else {
            expect(now).toMatchObject({ state: 'cancelled', cancelled_by: 'u01', close_reason: null });
            expect(decided.body.error).toBe('illegal_transition');
            expect(humanAcks).toEqual([]);
            expect((await handle.query(statusQuery)).status).toBe('escalated');
          }
          await handle.terminate('race round over').catch(() => undefined);
        }
      });

      it(`twenty users deciding, cancelling and accepting one record at once (${ROUNDS} rounds): exactly one outcome, recorded, and no 5xx`, async () => {
        const tally = { decided: 0, cancelled: 0 };
        for (let round = 0; round < ROUNDS; round++) {
          const { handle, record } = await escalated();
          // A cancel or an accept is one store write, a decision a round trip to the job: the store
          // writes start 0, 50 or 150 ms later, so either kind can win.
          const lag = [0, 50, 150][round % 3]!;
          const moves = USERS.map((as, i) => {
            if (i % 3 === 0)
              return decideOver(record.id, as, i % 2 ? { action: 'reject' } : { action: 'top_up', usd: 1 }).then(
                (r) => ({ as, move: 'decide', ...r }),
              );
            const move = i % 3 === 1 ? 'cancel' : 'accept';
            return sleep(lag)
              .then(() => call('POST', `/handoffs/${record.id}/${move}`, as))
              .then((r) => ({ as, move, ...r }));
          });
          const replies = await Promise.all(moves);
          const failed = replies.filter((r) => r.status >= 500);
          expect(failed, JSON.stringify(failed)).toEqual([]);
          expect(
            replies.filter((r) => r.status !== 200 && r.status !== 409),
            JSON.stringify(replies),
          ).toEqual([]);
          const decided = replies.filter((r) => r.move === 'decide' && r.status === 200);
          const cancelled = replies.filter((r) => r.move === 'cancel' && r.status === 200);
          expect(decided.length + cancelled.length, JSON.stringify(replies.map((r) => [r.as, r.move, r.status]))).toBe(
            1,
          );
          const now = (await api.rail.store.getEscalationRecord(record.id))!;
          const audit = await api.rail.store.escalationRecordAudit(record.id);
          const humanAcks = async () =>
            (await handle.query(acksQuery).catch(async () => (await handle.result()).acks)).filter(
              (a) => a.stage === 'human' && a.actor,
            );
          if (decided[0]) {
            tally.decided++;
            expect(now).toMatchObject({
              state: 'closed',
              close_reason: 'decided',
              accepted_by: decided[0].as,
              cancelled_by: null,
            });
            expect(audit.at(-1)).toMatchObject({
              transition: 'close',
              actor: decided[0].as,
              detail: { action: decided[0].body.decision.action },
            });
            expect((await humanAcks()).map((a) => a.actor)).toEqual([decided[0].as]);
          } else {
            tally.cancelled++;
            expect(now).toMatchObject({ state: 'cancelled', cancelled_by: cancelled[0]!.as, close_reason: null });
            expect(await humanAcks()).toEqual([]);
            expect((await handle.query(statusQuery)).status).toBe('escalated');
          }
          // Whoever accepted did so before the outcome: an accept the record does not show was refused.
          for (const accepted of replies.filter((r) => r.move === 'accept' && r.status === 200))
            expect(now.accepted_by).toBe(accepted.as);
          await handle.terminate('race round over').catch(() => undefined);
        }
        console.log(
          `20-way race on ${backend.name}: ${ROUNDS} rounds, ${tally.decided} decided, ${tally.cancelled} cancelled`,
        );
      });
    },
  );
}
