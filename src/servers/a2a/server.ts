/**
 * The A2A server (JSON-RPC binding, protocol 1.0): the agent card at
 * `/.well-known/agent-card.json` (public) and the JSON-RPC endpoint at `/a2a` (bearer token, the
 * handoff records API's users). The official SDK's `JsonRpcTransportHandler` parses each call and
 * maps errors to the protocol's codes; `HandrailA2aHandler` answers it from Temporal.
 *
 * Every refusal is a JSON-RPC error object: malformed JSON (-32700), a malformed request (-32600),
 * an unknown method (-32601), bad params or an entry the pipeline refuses (-32602), an unknown or
 * someone else's task (-32001). HTTP statuses other than 200 are kept for what happens before a
 * call is read: no or a bad token (401), a body over the limit (413), a body that is not JSON (415).
 */
import type { StreamStore } from '../../worker/store/types';
import { AgentCard, SSE_HEADERS, formatSSEErrorEvent, formatSSEEvent } from '@a2a-js/sdk';
import { A2A_ERROR_CODE } from '@a2a-js/sdk/errors';
import { JsonRpcTransportHandler, ServerCallContext, validateVersion } from '@a2a-js/sdk/server';
import type { Client } from '@temporalio/client';
import Fastify, { type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Pipeline } from '../../../contracts';
import type { ApiUsers } from '../api-users';
import { ApiError, bearer } from '../handoffs-api';
import { A2A_RPC_PATH, agentCardOf, type EntrySchemas } from './agent-card';
import { A2aCaller, HandrailA2aHandler } from './handler';
import { A2A_PART_MAX_BYTES } from './task-messages';

export const AGENT_CARD_PATH = '/.well-known/agent-card.json';

/** A data part at its cap, JSON-escaped, with room for the envelope. */
export const A2A_BODY_LIMIT = 4 * A2A_PART_MAX_BYTES;

export interface A2aServerOptions {
  temporal: Client;
  users: ApiUsers;
  pipelines: readonly Pipeline[];
  /** Zod schemas of entries checked by precompiled validators, by artifact type (agent-card.ts). */
  entrySchemas?: EntrySchemas;
  taskQueue?: string;
  /** Where callers reach the server, for the card's interface URL; default: the request's own host. */
  baseUrl?: string;
  bodyLimit?: number;
  logger?: boolean;
  blockingWaitMs?: number;
  /** Where the jobs' streams are kept (the workers' store), which streamed answers follow;
   * default: the configured store (DATABASE_URL, else SQLite under HANDRAIL_DATA_DIR). */
  store?: StreamStore;
}

type RpcId = string | number | null;

interface RpcReply {
  jsonrpc: '2.0';
  id: RpcId;
  error?: { code: number; message: string; data?: unknown };
  result?: unknown;
}

const rpcError = (id: RpcId, code: number, message: string): RpcReply => ({
  jsonrpc: '2.0',
  id,
  error: { code, message },
});

/** The call's id, when the body is an object that has a valid one (for error replies). */
function idOf(body: unknown): RpcId {
  const id = (body as { id?: unknown } | null)?.id;
  return typeof id === 'string' || (typeof id === 'number' && Number.isInteger(id)) ? id : null;
}

/** What makes a body no JSON-RPC 2.0 request (JSON-RPC's -32600), or null. */
function notARequest(body: unknown): string | null {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    return 'a JSON-RPC request is one object (batches are not supported)';
  const call = body as Record<string, unknown>;
  if (call.jsonrpc !== '2.0') return 'jsonrpc must be "2.0"';
  if (typeof call.method !== 'string' || call.method === '') return 'method must be a non-empty string';
  if ('id' in call && call.id !== null && idOf(call) === null) return 'id must be a string, an integer or null';
  return null;
}

const isStream = (value: unknown): value is AsyncGenerator<RpcReply, void, undefined> =>
  typeof (value as { [Symbol.asyncIterator]?: unknown } | null)?.[Symbol.asyncIterator] === 'function';

/** Sends a stream as server-sent events. An error before the first event is a plain JSON-RPC
 * reply (nothing was started, the caller should see it as any other refusal); after it, an
 * `error` event; a caller that hangs up stops the stream. */
async function sendStream(request: FastifyRequest, reply: FastifyReply, id: RpcId, stream: AsyncGenerator<RpcReply>) {
  let first: IteratorResult<RpcReply>;
  try {
    first = await stream.next();
  } catch (error) {
    return reply.send({ jsonrpc: '2.0', id, error: JsonRpcTransportHandler.mapToJSONRPCError(error) });
  }
  reply.hijack();
  const raw = reply.raw;
  raw.writeHead(200, SSE_HEADERS);
  let gone = false;
  // The response closes before it ended only when the caller hung up.
  raw.on('close', () => {
    if (raw.writableEnded) return;
    gone = true;
    void stream.return(undefined);
  });
  try {
    for (let step = first; !step.done && !gone; step = await stream.next()) raw.write(formatSSEEvent(step.value));
  } catch (error) {
    request.log.error(error);
    if (!gone)
      raw.write(formatSSEErrorEvent({ jsonrpc: '2.0', id, error: JsonRpcTransportHandler.mapToJSONRPCError(error) }));
  } finally {
    raw.end();
  }
}

export function buildA2aServer(options: A2aServerOptions): FastifyInstance {
  const { users, pipelines } = options;
  const app = Fastify({ logger: options.logger ?? false, bodyLimit: options.bodyLimit ?? A2A_BODY_LIMIT });
  const card = (baseUrl: string) =>
    agentCardOf({ pipelines, baseUrl, ...(options.entrySchemas ? { entrySchemas: options.entrySchemas } : {}) });
  const handler = new HandrailA2aHandler({
    temporal: options.temporal,
    pipelines,
    ...(options.taskQueue ? { taskQueue: options.taskQueue } : {}),
    ...(options.blockingWaitMs !== undefined ? { blockingWaitMs: options.blockingWaitMs } : {}),
    ...(options.store ? { store: options.store } : {}),
    card: () => card(options.baseUrl ?? ''),
  });
  const transport = new JsonRpcTransportHandler(handler);
  app.addHook('onClose', async () => handler.close());

  // JSON only, read as text: a body that is not JSON is the protocol's parse error, not Fastify's.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(
    ['application/json', 'application/a2a+json'],
    { parseAs: 'string' },
    (_request, body, done) => done(null, body),
  );

  app.get(AGENT_CARD_PATH, async (request, reply) => {
    const baseUrl = options.baseUrl ?? `${request.protocol}://${request.host}`;
    return reply.header('cache-control', 'no-cache').send(AgentCard.toJSON(card(baseUrl)));
  });

  app.post(A2A_RPC_PATH, async (request, reply) => {
    const user = bearer(request, users);
    let body: unknown;
    try {
      body = JSON.parse(request.body as string);
    } catch (error) {
      return reply.send(rpcError(null, A2A_ERROR_CODE.PARSE_ERROR, `invalid JSON: ${(error as Error).message}`));
    }
    const id = idOf(body);
    const problem = notARequest(body);
    if (problem) return reply.send(rpcError(id, A2A_ERROR_CODE.INVALID_REQUEST, problem));
    const version = request.headers['a2a-version'];
    const context = new ServerCallContext({
      user: new A2aCaller(user),
      ...(typeof version === 'string' && version !== '' ? { requestedVersion: version } : {}),
    });
    try {
      validateVersion(context.requestedVersion, card(''), 'JSONRPC');
    } catch (error) {
      return reply.send({ jsonrpc: '2.0', id, error: JsonRpcTransportHandler.mapToJSONRPCError(error) });
    }
    const answer = await transport.handle(body as Record<string, unknown>, context);
    if (isStream(answer)) return sendStream(request, reply, id, answer);
    if ((answer as RpcReply).error?.code === A2A_ERROR_CODE.INTERNAL_ERROR) request.log.error(answer);
    return reply.send(answer);
  });

  app.setNotFoundHandler(async (request, reply) =>
    reply.code(404).send({ error: 'not_found', message: `no route ${request.method} ${request.url.split('?')[0]}` }),
  );

  app.setErrorHandler(async (error: FastifyError, request, reply) => {
    if (error instanceof ApiError) {
      if (error.status === 401) reply.header('www-authenticate', 'Bearer');
      return reply.code(error.status).send(rpcError(null, A2A_ERROR_CODE.INVALID_REQUEST, error.message));
    }
    const status = error.statusCode ?? 500;
    if (status >= 400 && status < 500)
      return reply.code(status).send(rpcError(null, A2A_ERROR_CODE.INVALID_REQUEST, error.message));
    request.log.error(error);
    return reply.code(500).send(rpcError(null, A2A_ERROR_CODE.INTERNAL_ERROR, 'internal server error'));
  });

  return app;
}
