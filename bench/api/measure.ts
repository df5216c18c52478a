/**
 * The records API's list route against a bare route of the same framework:
 * `GET /workspaces/default/projects/ticket-triage/handoffs?limit=100` over 100 records in a
 * SQLite store, as a non-root user (the owner filter runs), against a bare Fastify route that
 * answers the same 100 records from memory. Both servers listen on loopback in this process and
 * autocannon drives each for the same time, one after the other, alternating who goes first.
 * Nothing writes meanwhile, so the SQLite store serves repeated lists from its cache (checked
 * against `PRAGMA data_version` on every request), as for a dashboard polling a project. The bare
 * route is the baseline of the same run; the target is ≥ 0.5×.
 */
import fs from 'node:fs';
import path from 'node:path';
import autocannon from 'autocannon';
import Fastify from 'fastify';
import type { Client } from '@temporalio/client';
import type { EscalationRecord } from '../../contracts';
import { apiUsers, sha256Token } from '../../src/servers/api-users';
import { buildHandoffsApi } from '../../src/servers/handoffs-api';
import { openStore } from '../../src/worker/store';
import { fmt, markdownTable } from '../report';

export const LIST_RECORDS = 100;
const TOKEN = 'bench-token';
const ROUTE = '/workspaces/default/projects/ticket-triage/handoffs?limit=100';

export interface ApiListFigures {
  records: number;
  seconds_per_side: number;
  connections: number;
  api_requests_per_second: number;
  bare_requests_per_second: number;
  ratio: number;
  api_p50_latency_ms: number;
  bare_p50_latency_ms: number;
  /** Non-2xx answers on either side: any is a broken run, not a slow one. */
  errors: number;
}

async function drive(url: string, seconds: number, connections: number, headers: Record<string, string>) {
  const result = await autocannon({ url, duration: seconds, connections, headers });
  return { rps: result.requests.average, p50: result.latency.p50, errors: result.non2xx + result.errors };
}

/** Runs both sides `rounds` times and sums them; `temporal` is only there for the API's decide route. */
export async function apiListVsBareRoute(
  tmp: string,
  temporal: Client,
  opts: { seconds: number; rounds: number; connections: number },
): Promise<ApiListFigures> {
  const dir = path.join(tmp, 'api-bench');
  fs.mkdirSync(dir, { recursive: true });
  const store = await openStore({ sqlitePath: path.join(dir, 'store.sqlite') });
  const users = apiUsers({ bench: { token_sha256: sha256Token(TOKEN), role: 'user' } });
  const api = buildHandoffsApi({ store, users, temporal, workspaces: { default: ['ticket-triage'] } });
  const bare = Fastify();
  try {
    for (let n = 0; n < LIST_RECORDS; n++) {
      // A fifth owned by the bench user, the rest unowned: every record is one the caller sees.
      await store.beginEscalationRecord(
        {
          workspace: 'default',
          project: 'ticket-triage',
          job_id: `bench-${n}`,
          summary: `hop 0 intake → intake.v1: intent refund, risk low, language en; record ${n}`,
          open_questions: ['invoice number not given'],
          next_steps: [
            'resolve: wallet has $0.002; "draft" costs $0.01',
            'decide approve | reject | top_up | revise (the job is blocked at draft)',
          ],
          ...(n % 5 === 0 ? { owner: 'bench' } : {}),
          created_by: 'rail',
        },
        `bench-${n}:escalation:1`,
      );
    }
    const records: EscalationRecord[] = await store.listEscalationRecords({
      workspace: 'default',
      project: 'ticket-triage',
      limit: LIST_RECORDS,
    });
    if (records.length !== LIST_RECORDS) throw new Error(`seeded ${records.length} records, not ${LIST_RECORDS}`);
    bare.get('/handoffs', async () => ({ handoffs: records }));
    const apiBase = await api.listen({ port: 0, host: '127.0.0.1' });
    const bareBase = await bare.listen({ port: 0, host: '127.0.0.1' });
    const auth = { authorization: `Bearer ${TOKEN}` };
    const listed = (await (await fetch(apiBase + ROUTE, { headers: auth })).json()) as { handoffs: unknown[] };
    if (listed.handoffs.length !== LIST_RECORDS)
      throw new Error(`the API listed ${listed.handoffs.length} records, not ${LIST_RECORDS}`);

    const sides = { api: { rps: 0, p50: 0, errors: 0 }, bare: { rps: 0, p50: 0, errors: 0 } };
    const run = {
      api: () => drive(apiBase + ROUTE, opts.seconds, opts.connections, auth),
      bare: () => drive(`${bareBase}/handoffs`, opts.seconds, opts.connections, {}),
    };
    for (let round = 0; round < opts.rounds; round++) {
      for (const side of round % 2 === 0 ? (['api', 'bare'] as const) : (['bare', 'api'] as const)) {
        const r = await run[side]();
        sides[side].rps += r.rps / opts.rounds;
        sides[side].p50 += r.p50 / opts.rounds;
        sides[side].errors += r.errors;
      }
    }
    return {
      records: LIST_RECORDS,
      seconds_per_side: opts.seconds * opts.rounds,
      connections: opts.connections,
      api_requests_per_second: sides.api.rps,
      bare_requests_per_second: sides.bare.rps,
      ratio: sides.api.rps / sides.bare.rps,
      api_p50_latency_ms: sides.api.p50,
      bare_p50_latency_ms: sides.bare.p50,
      errors: sides.api.errors + sides.bare.errors,
    };
  } finally {
    await api.close();
    await bare.close();
    await store.close();
  }
}

export function apiListMarkdown(f: ApiListFigures): string {
  return [
    `### Handoff records API: list ${f.records} records vs a bare Fastify route (${f.connections} connections, ${f.seconds_per_side} s per side)`,
    '',
    markdownTable(
      ['route', 'requests / s', 'p50 latency (ms)'],
      [
        [
          '`GET …/handoffs?limit=100` (auth, schema, store with its list cache, owner filter)',
          fmt(f.api_requests_per_second),
          fmt(f.api_p50_latency_ms),
        ],
        [
          'bare `GET /handoffs` (the same records from memory)',
          fmt(f.bare_requests_per_second),
          fmt(f.bare_p50_latency_ms),
        ],
        ['API / bare (target ≥ 0.5×)', `${fmt(f.ratio)}×`, ''],
      ],
    ),
    ...(f.errors > 0 ? ['', `**${f.errors} non-2xx or failed requests: this run is broken.**`] : []),
  ].join('\n');
}
