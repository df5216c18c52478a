/**
 * The codec server (docs/codec.md): lets the Temporal Web UI and the `temporal` CLI show payloads
 * the codec encrypted, without the keys ever leaving handrail. `POST /encode` and `POST /decode`
 * take and return `{"payloads": [{"metadata": {"<key>": "<base64>"}, "data": "<base64>"}]}`, the
 * wire format of Temporal's codec servers (the Web UI also sends `X-Namespace`, which one key set
 * ignores). CORS answers the Web UI's origins only; with HANDRAIL_CODEC_TOKEN set, every request
 * needs `Authorization: Bearer <token>` (for `temporal … --codec-auth`; the dev server's Web UI
 * sends none, so keep a tokenless server on loopback).
 * `npm run codec-server` and `handrail serve codec` both run `serveCodecServer`: on
 * HANDRAIL_CODEC_URL, with the keys of HANDRAIL_CODEC_KEYS / HANDRAIL_CODEC_KEYS_FILE;
 * SIGINT/SIGTERM stop it.
 */
import crypto from 'node:crypto';
import type { Payload } from '@temporalio/common';
import Fastify, { type FastifyInstance } from 'fastify';
import { AesGcmCodec, CodecConfigError, CodecKeyError, codecKeysFromEnv, type CodecKeys } from '../codec';
import { loadConfig, type HandrailConfig } from '../config';
import type { RunningServer, ServeOptions } from './api-main';
import { runServerProcess } from './process';

export interface CodecServerOptions {
  keys: CodecKeys;
  /** Browser origins allowed to call it (the Web UI's), e.g. `http://localhost:8233`. */
  origins: readonly string[];
  /** Required as `Authorization: Bearer <token>` when set. */
  token?: string;
  logger?: boolean;
}

interface JsonPayload {
  metadata?: Record<string, string>;
  data?: string;
}

const PAYLOADS_BODY = {
  type: 'object',
  required: ['payloads'],
  properties: {
    payloads: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          metadata: { type: 'object', additionalProperties: { type: 'string' } },
          data: { type: 'string' },
        },
      },
    },
  },
} as const;

const fromJson = (p: JsonPayload): Payload => ({
  metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64')])),
  ...(p.data === undefined ? {} : { data: Buffer.from(p.data, 'base64') }),
});
const toJson = (p: Payload): JsonPayload => ({
  metadata: Object.fromEntries(
    Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v ?? []).toString('base64')]),
  ),
  ...(p.data == null ? {} : { data: Buffer.from(p.data).toString('base64') }),
});

/** The loopback twin of an origin (`localhost` ↔ `127.0.0.1`): a browser sends whichever the user typed. */
function withLoopbackTwin(origin: string): string[] {
  const url = new URL(origin);
  const twin = url.hostname === 'localhost' ? '127.0.0.1' : url.hostname === '127.0.0.1' ? 'localhost' : undefined;
  return twin ? [url.origin, `${url.protocol}//${twin}${url.port ? `:${url.port}` : ''}`] : [url.origin];
}

/** The Web UI's origins: HANDRAIL_CODEC_CORS_ORIGINS (comma-separated), else the configured Web UI's. */
export function codecOrigins(config: Pick<HandrailConfig, 'webUiUrl'>, env: NodeJS.ProcessEnv = process.env): string[] {
  const listed = env.HANDRAIL_CODEC_CORS_ORIGINS?.split(',')
    .map((o) => o.trim())
    .filter(Boolean);
  return listed?.length ? listed.map((o) => new URL(o).origin) : withLoopbackTwin(config.webUiUrl);
}

const sameToken = (given: string, want: string) => {
  const [a, b] = [Buffer.from(given), Buffer.from(want)];
  return a.length === b.length && crypto.timingSafeEqual(a, b);
};

/** The codec server, not listening yet. */
export function buildCodecServer(opts: CodecServerOptions): FastifyInstance {
  const codec = new AesGcmCodec(opts.keys);
  const origins = new Set(opts.origins);
  const app = Fastify({ logger: opts.logger ?? false });
  // CORS by hand (@fastify/cors is not a dependency): the Web UI calls from its own origin, with
  // a preflight for its JSON body and X-Namespace header.
  app.addHook('onRequest', async (request, reply) => {
    const origin = request.headers.origin;
    if (origin && origins.has(origin)) {
      reply.header('access-control-allow-origin', origin);
      reply.header('vary', 'Origin');
      reply.header('access-control-allow-credentials', 'true');
      reply.header('access-control-allow-methods', 'POST, OPTIONS');
      reply.header('access-control-allow-headers', 'content-type, x-namespace, authorization');
    }
    // A preflight carries no credentials; the request it clears does.
    if (
      opts.token &&
      request.method !== 'OPTIONS' &&
      !sameToken(request.headers.authorization ?? '', `Bearer ${opts.token}`)
    )
      return reply
        .code(401)
        .send({ error: 'a bearer token is required (Authorization: Bearer <HANDRAIL_CODEC_TOKEN>)' });
  });
  app.options('/*', async (_request, reply) => reply.code(204).send());
  for (const [route, run] of [
    ['/encode', (p: Payload[]) => codec.encode(p)],
    ['/decode', (p: Payload[]) => codec.decode(p)],
  ] as const) {
    app.post<{ Body: { payloads: JsonPayload[] } }>(
      route,
      { schema: { body: PAYLOADS_BODY } },
      async (request, reply) => {
        try {
          return { payloads: (await run(request.body.payloads.map(fromJson))).map(toJson) };
        } catch (err) {
          // A payload it cannot decrypt is the caller's to fix (its key); say which key.
          if (err instanceof CodecKeyError) return reply.code(400).send({ error: err.message });
          throw err;
        }
      },
    );
  }
  return app;
}

/** Where the codec server listens: HANDRAIL_CODEC_URL (default http://127.0.0.1:8888). */
export function codecServerUrl(env: NodeJS.ProcessEnv = process.env): URL {
  return new URL(env.HANDRAIL_CODEC_URL || 'http://127.0.0.1:8888');
}

/** The codec server listening on HANDRAIL_CODEC_URL. It serves keys, not pipelines: no plugin. */
export async function serveCodecServer(options: Omit<ServeOptions, 'plugin'> = {}): Promise<RunningServer> {
  const env = options.env ?? process.env;
  const keys = codecKeysFromEnv(env);
  if (!keys)
    throw new CodecConfigError(
      'no codec keys configured: set HANDRAIL_CODEC_KEYS or HANDRAIL_CODEC_KEYS_FILE (docs/codec.md)',
    );
  const url = codecServerUrl(env);
  const origins = codecOrigins(loadConfig(env), env);
  const app = buildCodecServer({
    keys,
    origins,
    token: env.HANDRAIL_CODEC_TOKEN || undefined,
    ...(options.logger === undefined ? {} : { logger: options.logger }),
  });
  await app.listen({ host: url.hostname, port: Number(url.port || 80) });
  (options.log ?? console.log)(
    `codec server on ${url.origin} (keys ${[...keys.keys.keys()].join(', ')}; current ${keys.current}; CORS for ${origins.join(', ')})`,
  );
  return { address: url.origin, close: () => app.close() };
}

if (require.main === module) runServerProcess(() => serveCodecServer());
