/**
 * The escalation records HTTP API over real HTTP (fetch against a listening Fastify) on both store
 * backends: ownership, lifecycle, races, idempotency, bad input.
 */
import { Client, Connection } from '@temporalio/client';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import { ESCALATION_RECORD_STATES, type EscalationRecordBeginInput, type EscalationRecord } from '../../contracts';
import { apiUsers, sha256Token } from '../../src/servers/api-users';
import { buildHandoffsApi, ROUTES } from '../../src/servers/handoffs-api';
import type { Store } from '../../src/worker/store';
import { openFresh, storeBackends } from '../helpers/store-backends';

const TOKENS = { ana: 'tok-ana-1f3c', bob: 'tok-bob-77aa', ops: 'tok-ops-root' } as const;
type Caller = keyof typeof TOKENS | 'nobody';
const users = apiUsers({
  ana: { token_sha256: sha256Token(TOKENS.ana), role: 'user' },
  bob: { token_sha256: sha256Token(TOKENS.bob), role: 'user' },
  ops: { token_sha256: sha256Token(TOKENS.ops), role: 'root' },
});

const beginBody = (over: Record<string, unknown> = {}) => ({
  job_id: 'tkt_1',
  summary: 'Refund past the window; the policy chunk did not answer it.',
  open_questions: ['customer timezone unknown'],
  next_steps: ['confirm the order date'],
  ...over,
});

const storeInput = (over: Partial<EscalationRecordBeginInput> = {}): EscalationRecordBeginInput => ({
  workspace: 'acme',
  project: 'support',
  job_id: 'tkt_s',
  summary: 'seeded by the rail',
  open_questions: [],
  next_steps: ['look'],
  created_by: 'rail',
  ...over,
});

interface Reply {
  status: number;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any
  headers: Headers;
}

let temporal: Client;
beforeAll(async () => {
  temporal = new Client({
    connection: await Connection.connect({ address: inject('temporalAddress') }),
    namespace: inject('namespace'),
  });
});
afterAll(async () => {
  await temporal.connection.close();
});

for (const backend of storeBackends()) {
  describe.skipIf(backend.skip !== null)(
    `handoffs HTTP API on ${backend.name}${backend.skip ? ` (skipped: ${backend.skip})` : ''}`,
    () => {
      let store: Store;
      let app: ReturnType<typeof buildHandoffsApi>;
      let base: string;

      beforeEach(async () => {
        store = await openFresh(backend);
        app = buildHandoffsApi({ store, users, temporal, workspaces: { acme: ['support', 'billing'] } });
        base = await app.listen({ port: 0, host: '127.0.0.1' });
      });
      afterEach(async () => {
        await app.close();
        await store.close();
      });

      async function call(
        method: string,
        path: string,
        opts: { as?: Caller; body?: unknown; raw?: string; key?: string; headers?: Record<string, string> } = {},
      ): Promise<Reply> {
        const headers: Record<string, string> = { ...opts.headers };
        const as = opts.as ?? 'ana';
        if (as !== 'nobody') headers.authorization = `Bearer ${TOKENS[as]}`;
        if (opts.key) headers['idempotency-key'] = opts.key;
        let body: string | undefined;
        if (opts.raw !== undefined) body = opts.raw;
        else if (opts.body !== undefined) body = JSON.stringify(opts.body);
        if (body !== undefined) headers['content-type'] ??= 'application/json';
        const res = await fetch(base + path, { method, headers, body });
        const text = await res.text();
        return { status: res.status, body: text ? JSON.parse(text) : null, headers: res.headers };
      }

      const list = (as: Caller, query = '', project = 'support') =>
        call('GET', `/workspaces/acme/projects/${project}/handoffs${query}`, { as });
      const begin = (as: Caller, key: string, body: unknown = beginBody()) =>
        call('POST', '/workspaces/acme/projects/support/handoffs', { as, key, body });
      const transition = (as: Caller, id: string, what: 'accept' | 'cancel', key: string) =>
        call('POST', `/handoffs/${id}/${what}`, { as, key });

      /** Everything the store holds for acme/support, plus one record's audit trail. */
      async function snapshot(id: string) {
        const records: EscalationRecord[] = [];
        for (const state of ESCALATION_RECORD_STATES)
          records.push(
            ...(await store.listEscalationRecords({ workspace: 'acme', project: 'support', state, limit: 200 })),
          );
        for (const state of ESCALATION_RECORD_STATES)
          records.push(
            ...(await store.listEscalationRecords({ workspace: 'nowhere', project: 'support', state, limit: 200 })),
          );
        return { records, audit: await store.escalationRecordAudit(id) };
      }

      it('ownership: owned records are the owner’s and root’s (404 to others), unowned ones everyone’s; no token is 401', async () => {
        const owned = await store.beginEscalationRecord(
          storeInput({ owner: 'ana', job_id: 'tkt_owned' }),
          'tkt_owned:escalation:0',
        );
        const unowned = await store.beginEscalationRecord(storeInput({ job_id: 'tkt_free' }), 'tkt_free:escalation:0');
        const matrix: Record<Caller, { owned: number; unowned: number }> = {
          ana: { owned: 200, unowned: 200 },
          bob: { owned: 404, unowned: 200 },
          ops: { owned: 200, unowned: 200 },
          nobody: { owned: 401, unowned: 401 },
        };
        for (const [as, want] of Object.entries(matrix) as [Caller, { owned: number; unowned: number }][]) {
          for (const [which, record] of [
            ['owned', owned],
            ['unowned', unowned],
          ] as const) {
            const got = await call('GET', `/handoffs/${record.id}`, { as });
            expect(got.status, `${as} GET ${which}`).toBe(want[which]);
            if (got.status === 200) expect(got.body).toEqual(record);
            else expect(got.body).toMatchObject({ error: expect.any(String), message: expect.any(String) });
            if (got.status === 404) expect(got.body.error).toBe('not_found');
          }
          const listed = await list(as);
          if (as === 'nobody') {
            expect(listed.status).toBe(401);
            expect(listed.headers.get('www-authenticate')).toBe('Bearer');
            continue;
          }
          expect(listed.status).toBe(200);
          const ids = (listed.body.handoffs as EscalationRecord[]).map((r) => r.id);
          expect(ids.includes(owned.id), `${as} lists owned`).toBe(want.owned === 200);
          expect(ids.includes(unowned.id), `${as} lists unowned`).toBe(true);
        }
        // Another user's owned record cannot be accepted or cancelled either: 404, nothing changes.
        const before = await snapshot(owned.id);
        expect((await transition('bob', owned.id, 'accept', 'k1')).status).toBe(404);
        expect((await transition('bob', owned.id, 'cancel', 'k2')).status).toBe(404);
        expect(await snapshot(owned.id)).toEqual(before);
        // An unknown token is 401 too.
        const forged = await fetch(`${base}/handoffs/${owned.id}`, {
          headers: { authorization: 'Bearer not-a-token' },
        });
        expect(forged.status).toBe(401);
        expect(await forged.json()).toMatchObject({ error: 'unauthorized' });
      });

      it('begin → accept → cancel over HTTP, and accept after cancel is 409', async () => {
        const begun = await begin('ana', 'b-1', beginBody({ owner: 'ana' }));
        expect(begun.status).toBe(201);
        expect(begun.body).toMatchObject({
          state: 'open',
          workspace: 'acme',
          project: 'support',
          owner: 'ana',
          created_by: 'ana',
          job_id: 'tkt_1',
        });
        const id = begun.body.id as string;
        expect((await call('GET', `/handoffs/${id}`)).body).toEqual(begun.body);
        expect((await list('ana')).body.handoffs.map((r: EscalationRecord) => r.id)).toEqual([id]);

        const accepted = await transition('ana', id, 'accept', 'a-1');
        expect(accepted.status).toBe(200);
        expect(accepted.body).toMatchObject({ state: 'accepted', accepted_by: 'ana' });
        expect((await list('ana')).body.handoffs).toEqual([]);
        expect((await list('ana', '?state=accepted')).body.handoffs.map((r: EscalationRecord) => r.id)).toEqual([id]);

        const cancelled = await transition('ana', id, 'cancel', 'c-1');
        expect(cancelled.status).toBe(200);
        expect(cancelled.body).toMatchObject({ state: 'cancelled', cancelled_by: 'ana', accepted_by: 'ana' });

        const late = await transition('ana', id, 'accept', 'a-2');
        expect(late.status).toBe(409);
        expect(late.body).toMatchObject({ error: 'illegal_transition', message: expect.stringContaining('cancelled') });
        expect((await store.escalationRecordAudit(id)).map((r) => [r.transition, r.actor])).toEqual([
          ['begin', 'ana'],
          ['accept', 'ana'],
          ['cancel', 'ana'],
        ]);
      });

      it('begin → cancel, then accept is 409 and cancel again is 409', async () => {
        const { body: record } = await begin('bob', 'b-2');
        expect(record.owner).toBeNull();
        const cancelled = await transition('ana', record.id, 'cancel', 'c-1');
        expect(cancelled.status).toBe(200);
        expect(cancelled.body).toMatchObject({ state: 'cancelled', cancelled_by: 'ana', accepted_by: null });
        expect((await transition('bob', record.id, 'accept', 'a-1')).status).toBe(409);
        expect((await transition('bob', record.id, 'cancel', 'c-2')).body.error).toBe('illegal_transition');
        expect((await list('bob', '?state=cancelled')).body.handoffs).toHaveLength(1);
        expect(await store.escalationRecordAudit(record.id)).toHaveLength(2);
      });

      it('two users accepting the same record at once: exactly one 200, the other 409', async () => {
        for (let round = 0; round < 5; round++) {
          const record = await store.beginEscalationRecord(
            storeInput({ job_id: `tkt_race${round}` }),
            `tkt_race${round}:escalation:0`,
          );
          const replies = await Promise.all([
            transition('ana', record.id, 'accept', `race-${round}`),
            transition('bob', record.id, 'accept', `race-${round}`),
          ]);
          expect(replies.map((r) => r.status).sort()).toEqual([200, 409]);
          const winner = replies.find((r) => r.status === 200)!;
          const loser = replies.find((r) => r.status === 409)!;
          expect(loser.body).toMatchObject({ error: 'conflict', message: expect.any(String) });
          expect((await store.getEscalationRecord(record.id))!.accepted_by).toBe(winner.body.accepted_by);
          expect(await store.escalationRecordAudit(record.id)).toHaveLength(2);
        }
      });

      it('the same Idempotency-Key again returns the same body and writes nothing; reused for something else is 422', async () => {
        const first = await begin('ana', 'same-key');
        const again = await begin('ana', 'same-key');
        expect(again.status).toBe(201);
        expect(again.body).toEqual(first.body);
        const id = first.body.id as string;
        expect(await store.escalationRecordAudit(id)).toHaveLength(1);
        expect((await list('ops')).body.handoffs).toHaveLength(1);

        const accepted = await transition('ana', id, 'accept', 'acc-key');
        const acceptedAgain = await transition('ana', id, 'accept', 'acc-key');
        expect(acceptedAgain).toMatchObject({ status: 200, body: accepted.body });
        expect(await store.escalationRecordAudit(id)).toHaveLength(2);
        // A cancel under a key already used for the accept: refused, nothing changes.
        const before = await snapshot(id);
        const reused = await transition('ana', id, 'cancel', 'acc-key');
        expect(reused.status).toBe(422);
        expect(reused.body).toMatchObject({ error: 'key_reused', message: expect.any(String) });
        // A different begin under the first begin's key: refused too.
        const other = await begin('ana', 'same-key', beginBody({ summary: 'something else' }));
        expect(other.status).toBe(422);
        expect(other.body.error).toBe('key_reused');
        expect(await snapshot(id)).toEqual(before);
        // Keys are per caller: bob's "same-key" is his own record.
        const bobs = await begin('bob', 'same-key');
        expect(bobs.status).toBe(201);
        expect(bobs.body.id).not.toBe(id);
        expect(bobs.body.created_by).toBe('bob');
      });

      it('bad input is a 4xx with a message and changes nothing', async () => {
        const { body: record } = await begin('ana', 'seed-key', beginBody({ owner: 'ana' }));
        const before = await snapshot(record.id);
        const base64k = 'x'.repeat(600 * 1024);
        const cases: [string, () => Promise<Reply>, number, string?][] = [
          [
            'unknown field on begin',
            () => begin('ana', 'k-a', { ...beginBody(), created_by: 'mallory' }),
            400,
            'invalid_request',
          ],
          [
            'workspace in the begin body',
            () => begin('ana', 'k-b', { ...beginBody(), workspace: 'acme' }),
            400,
            'invalid_request',
          ],
          [
            'missing summary',
            () => begin('ana', 'k-c', { job_id: 'tkt_1', open_questions: [], next_steps: [] }),
            400,
            'invalid_request',
          ],
          ['blank summary', () => begin('ana', 'k-d', beginBody({ summary: '   ' })), 400, 'invalid_request'],
          ['unknown owner', () => begin('ana', 'k-e', beginBody({ owner: 'mallory' })), 400, 'unknown_owner'],
          [
            'actor in an accept body',
            () => call('POST', `/handoffs/${record.id}/accept`, { key: 'k-f', body: { actor: 'bob' } }),
            400,
            'invalid_request',
          ],
          [
            'oversize body',
            () =>
              call('POST', '/workspaces/acme/projects/support/handoffs', {
                key: 'k-g',
                body: beginBody({ summary: base64k }),
              }),
            413,
            'body_too_large',
          ],
          [
            'invalid JSON',
            () => call('POST', '/workspaces/acme/projects/support/handoffs', { key: 'k-h', raw: '{"job_id":' }),
            400,
            'invalid_json',
          ],
          [
            'not JSON',
            () =>
              call('POST', '/workspaces/acme/projects/support/handoffs', {
                key: 'k-i',
                raw: 'job_id=1',
                headers: { 'content-type': 'text/plain' },
              }),
            415,
            'unsupported_media_type',
          ],
          ['malformed id (get)', () => call('GET', '/handoffs/not-an-id'), 400, 'invalid_request'],
          ['malformed id (accept)', () => transition('ana', 'hr_XYZ', 'accept', 'k-j'), 400, 'invalid_request'],
          ['malformed id (cancel)', () => transition('ana', `${record.id}0`, 'cancel', 'k-k'), 400, 'invalid_request'],
          ['unknown record', () => transition('ana', `hr_${'0'.repeat(32)}`, 'accept', 'k-l'), 404, 'not_found'],
          [
            'unknown workspace (list)',
            () => call('GET', '/workspaces/nowhere/projects/support/handoffs'),
            404,
            'unknown_workspace',
          ],
          [
            'unknown workspace (begin)',
            () => call('POST', '/workspaces/nowhere/projects/support/handoffs', { key: 'k-m', body: beginBody() }),
            404,
            'unknown_workspace',
          ],
          [
            'unknown project',
            () => call('POST', '/workspaces/acme/projects/nope/handoffs', { key: 'k-n', body: beginBody() }),
            404,
            'unknown_project',
          ],
          [
            'missing Idempotency-Key (begin)',
            () => call('POST', '/workspaces/acme/projects/support/handoffs', { body: beginBody() }),
            400,
            'missing_idempotency_key',
          ],
          [
            'missing Idempotency-Key (accept)',
            () => call('POST', `/handoffs/${record.id}/accept`),
            400,
            'missing_idempotency_key',
          ],
          [
            'missing Idempotency-Key (cancel)',
            () => call('POST', `/handoffs/${record.id}/cancel`),
            400,
            'missing_idempotency_key',
          ],
          [
            'Idempotency-Key with a space',
            () => call('POST', `/handoffs/${record.id}/cancel`, { headers: { 'idempotency-key': 'a b' } }),
            400,
            'invalid_idempotency_key',
          ],
          ['limit 0', () => list('ana', '?limit=0'), 400, 'invalid_request'],
          ['limit not a number', () => list('ana', '?limit=many'), 400, 'invalid_request'],
          ['unknown state', () => list('ana', '?state=done'), 400, 'invalid_request'],
          ['unknown query field', () => list('ana', '?owner=bob'), 400, 'invalid_request'],
          ['no token', () => begin('nobody', 'k-o'), 401, 'unauthorized'],
          ['unknown route', () => call('GET', '/handoffs'), 404, 'not_found'],
        ];
        for (const [name, request, status, code] of cases) {
          const reply = await request();
          expect(reply.status, name).toBe(status);
          expect(reply.body, name).toMatchObject({ error: code ?? expect.any(String), message: expect.any(String) });
          expect(reply.body.message.length, name).toBeGreaterThan(0);
          expect(await snapshot(record.id), name).toEqual(before);
        }
        const invalid = await begin('ana', 'k-p', { ...beginBody(), extra: 1 });
        expect(invalid.body.issues).toEqual(
          expect.arrayContaining([expect.objectContaining({ path: expect.stringContaining('body') })]),
        );
      });

      it('accept and cancel take an empty JSON body as no body', async () => {
        const { body: record } = await begin('ana', 'b-empty');
        const empty = (what: 'accept' | 'cancel', key: string) =>
          call('POST', `/handoffs/${record.id}/${what}`, { key, raw: '' });
        const accepted = await empty('accept', 'a-empty');
        expect(accepted.status, JSON.stringify(accepted.body)).toBe(200);
        expect(accepted.body).toMatchObject({ state: 'accepted', accepted_by: 'ana' });
        const cancelled = await empty('cancel', 'c-empty');
        expect(cancelled.status, JSON.stringify(cancelled.body)).toBe(200);
        expect(cancelled.body).toMatchObject({ state: 'cancelled', cancelled_by: 'ana' });
        // A body that must be there still must: an empty begin is refused for its missing fields.
        const bare = await call('POST', '/workspaces/acme/projects/support/handoffs', { key: 'b-bare', raw: '' });
        expect(bare).toMatchObject({ status: 400, body: { error: 'invalid_request' } });
      });

      it('refuses bidi overrides and isolates in text a person reads, naming the field, and keeps right-to-left marks', async () => {
        const spoof = 'refund \u202e000,01$ ot pu';
        const cases: [string, Record<string, unknown>, string][] = [
          ['summary', { summary: spoof }, 'body/summary'],
          ['open question', { open_questions: ['ok', `a \u2067b\u2069`] }, 'body/open_questions/1'],
          ['next step', { next_steps: [`\u202aleft`] }, 'body/next_steps/0'],
        ];
        for (const [name, over, path] of cases) {
          const refused = await begin('ana', `bidi-${name.replace(' ', '-')}`, beginBody(over));
          expect(refused.status, name).toBe(400);
          expect(refused.body.issues, name).toEqual([
            expect.objectContaining({ path, message: expect.stringContaining('bidi') }),
          ]);
        }
        expect((await list('ops')).body.handoffs).toEqual([]);
        const marked = await begin('ana', 'bidi-marks', beginBody({ summary: 'שלום \u200fעולם\u200e (order 42)' }));
        expect(marked.status).toBe(201);
        const note = await call('POST', `/handoffs/${marked.body.id}/decide`, {
          key: 'd-bidi',
          body: { action: 'approve', note: spoof },
        });
        expect(note.status).toBe(400);
        expect(note.body.issues).toEqual([expect.objectContaining({ path: 'body/note' })]);
      });

      it('serves an OpenAPI 3.1 document, without a token, naming every route', async () => {
        const reply = await call('GET', '/openapi.json', { as: 'nobody' });
        expect(reply.status).toBe(200);
        const doc = reply.body;
        expect(doc.openapi).toBe('3.1.0');
        const operations = Object.entries(doc.paths as Record<string, Record<string, unknown>>).flatMap(([path, ops]) =>
          Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`),
        );
        expect(operations.sort()).toEqual(
          [
            'GET /workspaces/{ws}/projects/{p}/handoffs',
            'POST /workspaces/{ws}/projects/{p}/handoffs',
            'GET /handoffs/{id}',
            'POST /handoffs/{id}/accept',
            'POST /handoffs/{id}/cancel',
            'POST /handoffs/{id}/decide',
            'GET /openapi.json',
          ].sort(),
        );
        for (const route of ROUTES)
          expect(app.hasRoute({ method: route.method, url: route.url }), route.url).toBe(true);
        const beginOp = doc.paths['/workspaces/{ws}/projects/{p}/handoffs'].post;
        expect(beginOp.requestBody.content['application/json'].schema).toMatchObject({
          additionalProperties: false,
          required: expect.arrayContaining(['job_id', 'summary']),
        });
        expect(beginOp.parameters.map((p: { name: string; in: string }) => `${p.in}:${p.name}`)).toEqual([
          'path:ws',
          'path:p',
          'header:Idempotency-Key',
        ]);
        expect(Object.keys(beginOp.responses)).toEqual(
          expect.arrayContaining(['201', '400', '401', '404', '413', '422']),
        );
        expect(doc.paths['/handoffs/{id}'].get.parameters[0].schema.pattern).toBe('^hr_[0-9a-f]{32}$');
        // The decision's body has no actor: the caller is the actor.
        const decideBody = doc.paths['/handoffs/{id}/decide'].post.requestBody.content['application/json'].schema;
        expect(decideBody).toMatchObject({ additionalProperties: false, required: ['action'] });
        expect(Object.keys(decideBody.properties)).not.toContain('actor');
      });
    },
  );
}
