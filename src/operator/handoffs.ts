/**
 * A client of the records HTTP API (src/servers/handoffs-api.ts), as `handrail handoffs`
 * uses it: HANDRAIL_API_URL, and the bearer token in HANDRAIL_API_TOKEN, else the demo user's
 * token file that `npm run demo` writes (`<dataDir>/api-token`). Responses are checked against
 * the same contracts the server answers with.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { z } from 'zod';
import {
  HandoffApiError,
  EscalationRecordDecideResponse,
  EscalationRecordListResponse,
  EscalationRecord,
  type EscalationRecordDecideRequest,
  type EscalationRecordState,
} from '../../contracts';
import type { HandrailConfig } from '../config';

/** Where `npm run demo` leaves its API user's token. */
export const apiTokenFile = (config: Pick<HandrailConfig, 'dataDir'>) => path.join(config.dataDir, 'api-token');

/** The API answered with an error: its status, code and message as sent. */
export class HandoffsApiRequestError extends Error {
  override readonly name = 'HandoffsApiRequestError';
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** The API is not there, or no token is configured. */
export class HandoffsApiUnavailableError extends Error {
  override readonly name = 'HandoffsApiUnavailableError';
}

export function apiToken(config: Pick<HandrailConfig, 'dataDir'>, env: NodeJS.ProcessEnv = process.env): string {
  if (env.HANDRAIL_API_TOKEN) return env.HANDRAIL_API_TOKEN;
  const file = apiTokenFile(config);
  if (fs.existsSync(file)) return fs.readFileSync(file, 'utf8').trim();
  throw new HandoffsApiUnavailableError(
    `no API token: set HANDRAIL_API_TOKEN (or run \`npm run demo\`, which writes ${file})`,
  );
}

export interface HandoffsClient {
  list(project: string, query?: { state?: EscalationRecordState; limit?: number }): Promise<EscalationRecord[]>;
  show(id: string): Promise<EscalationRecord>;
  accept(id: string): Promise<EscalationRecord>;
  cancel(id: string): Promise<EscalationRecord>;
  decide(id: string, decision: EscalationRecordDecideRequest): Promise<EscalationRecordDecideResponse>;
}

/** Each write carries a fresh Idempotency-Key unless one is given: a command run twice is two
 * requests, a retry inside one is not. */
export function handoffsClient(
  config: Pick<HandrailConfig, 'apiUrl' | 'dataDir' | 'namespace'>,
  env: NodeJS.ProcessEnv = process.env,
): HandoffsClient {
  const token = apiToken(config, env);
  async function call<S extends z.ZodType>(
    method: 'GET' | 'POST',
    route: string,
    schema: S,
    body?: unknown,
  ): Promise<z.infer<S>> {
    const headers: Record<string, string> = { authorization: `Bearer ${token}` };
    if (method === 'POST') {
      headers['idempotency-key'] = crypto.randomUUID();
      headers['content-type'] = 'application/json';
    }
    let res: Response;
    try {
      res = await fetch(`${config.apiUrl}${route}`, {
        method,
        headers,
        ...(method === 'POST' ? { body: JSON.stringify(body ?? {}) } : {}),
      });
    } catch (error) {
      throw new HandoffsApiUnavailableError(
        `the handoff records API at ${config.apiUrl} did not answer (${(error as Error).cause ?? (error as Error).message}); start it with \`npm run api\``,
      );
    }
    const json: unknown = await res.json().catch(() => null);
    if (!res.ok) {
      const failure = HandoffApiError.safeParse(json);
      throw new HandoffsApiRequestError(
        res.status,
        failure.success ? failure.data.error : 'http_error',
        failure.success ? failure.data.message : `HTTP ${res.status}`,
      );
    }
    return schema.parse(json);
  }
  const ws = encodeURIComponent(config.namespace);
  const one = (id: string) => `/handoffs/${encodeURIComponent(id)}`;
  return {
    async list(project, query = {}) {
      const qs = new URLSearchParams(
        Object.entries(query)
          .filter(([, v]) => v !== undefined)
          .map(([k, v]): [string, string] => [k, String(v)]),
      );
      const route = `/workspaces/${ws}/projects/${encodeURIComponent(project)}/handoffs${qs.size ? `?${qs}` : ''}`;
      return (await call('GET', route, EscalationRecordListResponse)).handoffs;
    },
    show: (id) => call('GET', one(id), EscalationRecord),
    accept: (id) => call('POST', `${one(id)}/accept`, EscalationRecord),
    cancel: (id) => call('POST', `${one(id)}/cancel`, EscalationRecord),
    decide: (id, decision) => call('POST', `${one(id)}/decide`, EscalationRecordDecideResponse, decision),
  };
}
