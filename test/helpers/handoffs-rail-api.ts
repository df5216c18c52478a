/**
 * A rail (worker + store) with the records HTTP API in front of it, for tests of
 * escalated jobs decided over HTTP: registers its own beforeEach/afterEach on the calling suite.
 */
import { afterEach, beforeEach, expect } from 'vitest';
import type { EscalationRecord } from '../../contracts';
import { startJob } from '../../src/operator/client';
import { apiUsers, sha256Token } from '../../src/servers/api-users';
import { buildHandoffsApi } from '../../src/servers/handoffs-api';
import { jobRequest, startRail, uniqueId, waitForStatus, type Rail } from './rail';
import { openFresh, type Backend } from './store-backends';

// A wallet that pays intake and retrieve, not the draft: the job escalates at the draft.
export const EMPTY_WALLET = { usd: 0.005, revisions: 1 };

export interface Reply {
  status: number;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

export interface RailApi {
  readonly rail: Rail;
  call(method: 'GET' | 'POST', path: string, as: string, body?: unknown): Promise<Reply>;
  /** Starts a job that escalates at the draft and returns its open record, found over HTTP. */
  escalated(over?: Parameters<typeof jobRequest>[0]): Promise<{
    request: ReturnType<typeof jobRequest>;
    handle: Awaited<ReturnType<typeof startJob>>['handle'];
    record: EscalationRecord;
  }>;
}

/** `tokens`: user name → bearer token; the user named `root` (if any) has role root. */
export function useRailApi(backend: Backend, tokens: Record<string, string>, root: string): RailApi {
  const users = apiUsers(
    Object.fromEntries(
      Object.entries(tokens).map(([name, token]) => [
        name,
        { token_sha256: sha256Token(token), role: name === root ? 'root' : 'user' },
      ]),
    ),
  );
  let rail: Rail | undefined;
  let app: ReturnType<typeof buildHandoffsApi> | undefined;
  let base = '';

  beforeEach(async () => {
    rail = await startRail({ store: await openFresh(backend) });
    app = buildHandoffsApi({
      store: rail.store,
      users,
      temporal: rail.client,
      workspaces: { default: ['ticket-triage', 'support-routing'] },
    });
    base = await app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterEach(async () => {
    await app?.close();
    await rail?.stop();
    await rail?.store.close();
  });

  async function call(method: 'GET' | 'POST', path: string, as: string, body?: unknown): Promise<Reply> {
    const headers: Record<string, string> = { authorization: `Bearer ${tokens[as]}` };
    if (method === 'POST')
      Object.assign(headers, { 'idempotency-key': uniqueId('k'), 'content-type': 'application/json' });
    const res = await fetch(base + path, {
      method,
      headers,
      ...(method === 'POST' ? { body: JSON.stringify(body ?? {}) } : {}),
    });
    return { status: res.status, body: (await res.json()) as unknown };
  }

  async function escalated(over: Parameters<typeof jobRequest>[0] = {}) {
    const request = jobRequest({ budget: EMPTY_WALLET, ...over });
    const { handle } = await startJob(rail!.client, request, { taskQueue: rail!.taskQueue });
    await waitForStatus(handle, 'escalated');
    let record: EscalationRecord | undefined;
    for (let tries = 0; !record; tries++) {
      expect(tries).toBeLessThan(100);
      const listed = await call('GET', '/workspaces/default/projects/ticket-triage/handoffs', root);
      record = (listed.body.handoffs as EscalationRecord[]).find((r) => r.job_id === request.job_id);
      if (!record) await new Promise((r) => setTimeout(r, 100));
    }
    return { request, handle, record };
  }

  return {
    get rail() {
      return rail!;
    },
    call,
    escalated,
  };
}
