/**
 * The rail's escalation records end to end, on both stores: a job escalates, the rail
 * begins its record, a human finds it over HTTP, takes it and decides through the API, and the
 * job completes with one CRM write and the record's delta in its log as a hook result. Refused
 * decisions, cancellation and timeout close (or keep) the record as the lifecycle says.
 */
import { describe, expect, it } from 'vitest';
import { ESCALATION_RECORD_DECIDED_EVENT, type EscalationRecord } from '../../contracts';
import { readLog } from '../../activities/transcript-log';
import { startJob } from '../../src/operator/client';
import { EMPTY_WALLET, useRailApi } from '../helpers/handoffs-rail-api';
import { jobRequest, startRail, waitForStatus } from '../helpers/rail';
import { openFresh, storeBackends } from '../helpers/store-backends';
import type { Store } from '../../src/worker/store';

const TOKENS = { ana: 'tok-ana-rail', bob: 'tok-bob-rail', ops: 'tok-ops-rail' } as const;

for (const backend of storeBackends()) {
  describe.skipIf(backend.skip !== null)(
    `escalation records of escalated jobs on ${backend.name}${backend.skip ? ` (skipped: ${backend.skip})` : ''}`,
    () => {
      const api = useRailApi(backend, TOKENS, 'ops');
      const { call, escalated } = api;

      it('found, taken and decided over HTTP: the job completes with one CRM write, the decider as actor, and the record’s delta in its log as a hook result', async () => {
        const { request, handle, record } = await escalated({ owner: 'ana' });
        expect(record).toMatchObject({
          workspace: 'default',
          project: 'ticket-triage',
          state: 'open',
          owner: 'ana',
          created_by: 'rail',
        });
        expect(record.next_steps[0]).toMatch(/^resolve: wallet has \$0\.\d+; "draft" costs \$0\.\d+$/);
        expect(record.next_steps.at(-1)).toMatch(
          /^decide approve \| reject \| top_up \| revise \(the job is blocked at draft\)$/,
        );
        // Owned by ana: bob neither lists nor reads it.
        expect(
          (await call('GET', '/workspaces/default/projects/ticket-triage/handoffs', 'bob')).body.handoffs.map(
            (r: EscalationRecord) => r.id,
          ),
        ).not.toContain(record.id);
        expect((await call('GET', `/handoffs/${record.id}`, 'bob')).status).toBe(404);

        const taken = await call('POST', `/handoffs/${record.id}/accept`, 'ana');
        expect(taken.status).toBe(200);
        expect(taken.body).toMatchObject({ state: 'accepted', accepted_by: 'ana' });

        // The body cannot name the actor on this path: the caller is the actor.
        expect(
          (await call('POST', `/handoffs/${record.id}/decide`, 'ana', { action: 'top_up', usd: 1, actor: 'mallory' }))
            .status,
        ).toBe(400);
        const decided = await call('POST', `/handoffs/${record.id}/decide`, 'ana', {
          action: 'top_up',
          usd: 1,
          note: 'customer is a key account',
        });
        expect(decided.status).toBe(200);
        expect(decided.body.decision).toEqual({
          action: 'top_up',
          actor: 'ana',
          next: 'the wallet grows and the job resumes at draft',
        });

        const result = await handle.result();
        expect(result.status).toBe('completed');
        expect(result.acks.find((a) => a.stage === 'human' && a.actor)?.actor).toBe('ana');
        expect(await api.rail.store.listWrites(request.job_id)).toHaveLength(1);
        expect((await api.rail.store.getCrmTicket(request.ticket.id))?.revision).toBe(1);

        const closed = await api.rail.store.getEscalationRecord(record.id);
        expect(closed).toMatchObject({ state: 'closed', close_reason: 'decided', accepted_by: 'ana' });
        expect((await api.rail.store.escalationRecordAudit(record.id)).map((a) => [a.transition, a.actor])).toEqual([
          ['begin', 'rail'],
          ['accept', 'ana'],
          ['close', 'ana'],
        ]);
        expect((await api.rail.store.escalationRecordAudit(record.id)).at(-1)?.detail).toEqual({
          from: 'accepted',
          to: 'closed',
          close_reason: 'decided',
          action: 'top_up',
        });

        // The delta reached the draft, the hop the decision sent, as one message marked as a hook
        // result (in its turn of the log); the package itself is as the rail would send it without.
        const { turns } = await readLog(api.rail.store, result.package, request.job_id);
        const hooked = turns.filter((t) => t.messages.some((m) => m.origin));
        expect(hooked.map((t) => t.stage)).toEqual(['draft']);
        const hooks = hooked[0]!.messages.filter((m) => m.origin);
        expect(hooks).toHaveLength(1);
        expect(hooks[0]).toMatchObject({
          agent_id: 'human',
          origin: { kind: 'hook_result', event: ESCALATION_RECORD_DECIDED_EVENT },
          message: { role: 'assistant' },
        });
        const text = hooks[0]!.message.content.map((b) => (b.type === 'text' ? b.text : '')).join('');
        expect(text).toContain(`Handoff record ${record.id}, taken by ana: decided top_up by ana.`);
        expect(text).toContain('Decision note: customer is a key account');
        expect(text).toContain(`Summary: ${record.summary}`);
      });

      it('a decision the job refuses is 409 with the job’s reason, and changes nothing; a record another user took is 409 to others', async () => {
        const { handle, record } = await escalated();
        const refused = await call('POST', `/handoffs/${record.id}/decide`, 'bob', { action: 'top_up' });
        expect(refused.status).toBe(409);
        expect(refused.body).toEqual({ error: 'decision_refused', message: 'top_up needs usd > 0 or revisions > 0' });
        expect(await api.rail.store.getEscalationRecord(record.id)).toMatchObject({ state: 'open', accepted_by: null });
        expect((await handle.query('status')) as { status: string }).toMatchObject({ status: 'escalated' });

        expect((await call('POST', `/handoffs/${record.id}/accept`, 'bob')).status).toBe(200);
        const other = await call('POST', `/handoffs/${record.id}/decide`, 'ana', { action: 'approve' });
        expect(other.status).toBe(409);
        expect(other.body.error).toBe('conflict');
        expect((await handle.query('status')) as { status: string }).toMatchObject({ status: 'escalated' });

        // Bob took it, so bob decides it: the job ends, the record is closed, still bob's.
        const rejected = await call('POST', `/handoffs/${record.id}/decide`, 'bob', { action: 'reject' });
        expect(rejected.status).toBe(200);
        expect((await handle.result()).status).toBe('rejected');
        expect(await api.rail.store.getEscalationRecord(record.id)).toMatchObject({
          state: 'closed',
          close_reason: 'decided',
          accepted_by: 'bob',
        });
      });

      it('a record an API user began for someone’s job decides nothing: the job takes decisions only through its escalation’s record', async () => {
        const { handle, request, record } = await escalated({ owner: 'ana' });
        const forged = await call('POST', '/workspaces/default/projects/ticket-triage/handoffs', 'bob', {
          job_id: request.job_id,
          summary: 'mine now',
          open_questions: [],
          next_steps: [],
        });
        expect(forged.status).toBe(201);
        const refused = await call('POST', `/handoffs/${forged.body.id}/decide`, 'bob', { action: 'top_up', usd: 1 });
        expect(refused.status).toBe(409);
        expect(refused.body).toEqual({
          error: 'decision_refused',
          message: `handoff record ${forged.body.id} was not begun by the rail for an escalation; it decides no job`,
        });
        expect((await handle.query('status')) as { status: string }).toMatchObject({ status: 'escalated' });
        expect(await api.rail.store.getEscalationRecord(record.id)).toMatchObject({ state: 'open', accepted_by: null });
      });

      it('a record an API user began for a job decides nothing, with one answer whether that job is someone else’s, ended or never was', async () => {
        const { handle, request } = await escalated({ owner: 'ana' });
        const ended = await escalated();
        expect((await call('POST', `/handoffs/${ended.record.id}/decide`, 'ana', { action: 'reject' })).status).toBe(
          200,
        );
        expect((await ended.handle.result()).status).toBe('rejected');
        const answers: unknown[] = [];
        for (const jobId of [request.job_id, ended.request.job_id, 'never-started-job']) {
          const begun = await call('POST', '/workspaces/default/projects/ticket-triage/handoffs', 'bob', {
            job_id: jobId,
            summary: 'probe',
            open_questions: [],
            next_steps: [],
          });
          expect(begun.status).toBe(201);
          const reply = await call('POST', `/handoffs/${begun.body.id}/decide`, 'bob', { action: 'approve' });
          answers.push({
            status: reply.status,
            body: JSON.parse(JSON.stringify(reply.body).replaceAll(begun.body.id, '<record>')),
          });
        }
        expect(answers[0]).toEqual({
          status: 409,
          body: {
            error: 'decision_refused',
            message: 'handoff record <record> was not begun by the rail for an escalation; it decides no job',
          },
        });
        expect(answers[1]).toEqual(answers[0]);
        expect(answers[2]).toEqual(answers[0]);
        expect((await handle.query('status')) as { status: string }).toMatchObject({ status: 'escalated' });
      });

      it('a second escalation has a record of its own: the first record decides nothing more, and a decision hands on no earlier decision’s delta', async () => {
        const { request, handle, record: first } = await escalated();
        // Too small a top-up: the draft is refused again and the job escalates a second time.
        expect(
          (await call('POST', `/handoffs/${first.id}/decide`, 'ana', { action: 'top_up', usd: 0.001 })).status,
        ).toBe(200);
        let second: EscalationRecord | undefined;
        for (let tries = 0; !second; tries++) {
          expect(tries).toBeLessThan(100);
          const listed = await call('GET', '/workspaces/default/projects/ticket-triage/handoffs', 'ops');
          // The first one is listed open until the job has closed it.
          second = (listed.body.handoffs as EscalationRecord[]).find(
            (r) => r.job_id === request.job_id && r.id !== first.id,
          );
          if (!second) await new Promise((r) => setTimeout(r, 100));
        }
        expect(await api.rail.store.getEscalationRecord(first.id)).toMatchObject({
          state: 'closed',
          close_reason: 'decided',
          accepted_by: 'ana',
        });
        const stale = await call('POST', `/handoffs/${first.id}/decide`, 'ana', { action: 'top_up', usd: 1 });
        expect(stale.status).toBe(409);
        expect(stale.body.message).toBe(
          `handoff record ${first.id} is not the record of the escalation this job waits on`,
        );

        // The second record is given up; the job is decided over Temporal directly.
        expect((await call('POST', `/handoffs/${second.id}/cancel`, 'ana')).status).toBe(200);
        await handle.executeUpdate('decide', { args: [{ action: 'top_up', usd: 1, actor: 'ops.lead' }] });
        const result = await handle.result();
        expect(result.status).toBe('completed');
        const { turns } = await readLog(api.rail.store, result.package, request.job_id);
        // The job's log is read (an empty one would hold no delta either), and no turn holds one.
        expect(turns.map((t) => t.stage)).toEqual(['intake', 'retrieve', 'draft', 'judge', 'writeback']);
        expect(turns.some((t) => t.messages.some((m) => m.origin))).toBe(false);
      });

      it('two users deciding one record at once: exactly one decision is applied, the other is 409', async () => {
        const { handle, record } = await escalated();
        const both = await Promise.all(
          (['ana', 'bob'] as const).map((as) =>
            call('POST', `/handoffs/${record.id}/decide`, as, { action: 'top_up', usd: 1 }),
          ),
        );
        expect(both.map((r) => r.status).sort()).toEqual([200, 409]);
        const winner = both.find((r) => r.status === 200)!.body.decision.actor as string;
        const result = await handle.result();
        expect(result.status).toBe('completed');
        expect(result.acks.filter((a) => a.stage === 'human' && a.actor).map((a) => a.actor)).toEqual([winner]);
        expect(await api.rail.store.getEscalationRecord(record.id)).toMatchObject({
          state: 'closed',
          accepted_by: winner,
        });
      });

      it('a cancelled job closes its record as job_cancelled; a job whose decision times out closes it as timed_out', async () => {
        const cancelled = await escalated();
        await cancelled.handle.cancel();
        expect((await cancelled.handle.result()).status).toBe('cancelled');
        expect(await api.rail.store.getEscalationRecord(cancelled.record.id)).toMatchObject({
          state: 'closed',
          close_reason: 'job_cancelled',
        });

        const waited = await escalated({ decision_timeout: '3s' });
        expect((await waited.handle.result()).status).toBe('escalated');
        expect(await api.rail.store.getEscalationRecord(waited.record.id)).toMatchObject({
          state: 'closed',
          close_reason: 'timed_out',
        });
      });

      it('a record cancelled through the API stays cancelled when the job is decided, and hands no delta on', async () => {
        const { request, handle, record } = await escalated();
        expect((await call('POST', `/handoffs/${record.id}/cancel`, 'ana')).body.state).toBe('cancelled');
        expect((await call('POST', `/handoffs/${record.id}/decide`, 'ana', { action: 'approve' })).status).toBe(409);
        // Decided over Temporal directly (the CLI, the Web UI): the job goes on, the record stays given up.
        await handle.executeUpdate('decide', { args: [{ action: 'top_up', usd: 1, actor: 'ops.lead' }] });
        const result = await handle.result();
        expect(result.status).toBe('completed');
        expect(await api.rail.store.getEscalationRecord(record.id)).toMatchObject({
          state: 'cancelled',
          cancelled_by: 'ana',
        });
        const { turns } = await readLog(api.rail.store, result.package, request.job_id);
        // The job's log is read (an empty one would hold no delta either), and no turn holds one.
        expect(turns.map((t) => t.stage)).toEqual(['intake', 'retrieve', 'draft', 'judge', 'writeback']);
        expect(turns.some((t) => t.messages.some((m) => m.origin))).toBe(false);
      });
    },
  );
}

describe('a decision while the job closes its timed-out record', () => {
  it('is refused, not acknowledged and then dropped', async () => {
    const backing = await openFresh(storeBackends()[0]!);
    // The close takes a while, as on a busy database: the window a decision could fall into.
    const slow: Store = new Proxy(backing, {
      get(target, name, receiver) {
        const value = Reflect.get(target, name, receiver) as unknown;
        if (name !== 'closeEscalationRecord' || typeof value !== 'function')
          return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
        return async (...args: unknown[]) => {
          await new Promise((r) => setTimeout(r, 3000));
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
    const rail = await startRail({ store: slow });
    try {
      const { handle } = await startJob(rail.client, jobRequest({ budget: EMPTY_WALLET, decision_timeout: '2s' }), {
        taskQueue: rail.taskQueue,
      });
      await waitForStatus(handle, 'escalated');
      // Past the timeout, inside the slow close.
      await new Promise((r) => setTimeout(r, 3000));
      const late = await handle
        .executeUpdate('decide', { args: [{ action: 'top_up', usd: 1, actor: 'ops.lead' }] })
        .catch((e: Error) => e);
      expect(late).toBeInstanceOf(Error);
      expect(String((late as Error & { cause?: Error }).cause?.message)).toContain('not waiting for a human decision');
      expect((await handle.result()).status).toBe('escalated');
    } finally {
      await rail.stop();
      await backing.close();
    }
  });
});
