import crypto from 'node:crypto';
import { defaultPayloadConverter } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { parseCodecKeys } from '../../../src/codec';
import { buildCodecServer, codecOrigins } from '../../../src/servers/codec-server';

const keys = parseCodecKeys(
  JSON.stringify({ keys: [{ id: 'k1', key: crypto.randomBytes(32).toString('base64') }] }),
  'test',
);
const UI = 'http://localhost:8233';
const jsonPayload = (value: unknown) => {
  const p = defaultPayloadConverter.toPayload(value)!;
  return {
    metadata: Object.fromEntries(Object.entries(p.metadata!).map(([k, v]) => [k, Buffer.from(v!).toString('base64')])),
    data: Buffer.from(p.data!).toString('base64'),
  };
};

describe('codec server', () => {
  it('encodes and decodes in the Web UI wire format, with CORS for the UI origin', async () => {
    const app = buildCodecServer({ keys, origins: [UI] });
    const plain = jsonPayload({ subject: 'Charged twice' });
    const headers = { origin: UI, 'x-namespace': 'default' };
    const encoded = await app.inject({ method: 'POST', url: '/encode', headers, payload: { payloads: [plain] } });
    expect(encoded.statusCode).toBe(200);
    expect(encoded.headers['access-control-allow-origin']).toBe(UI);
    const [e] = encoded.json<{ payloads: { metadata: Record<string, string>; data: string }[] }>().payloads;
    expect(Buffer.from(e!.metadata.encoding!, 'base64').toString()).toBe('binary/encrypted');
    expect(Buffer.from(e!.data, 'base64').toString('latin1')).not.toContain('Charged twice');
    const decoded = await app.inject({ method: 'POST', url: '/decode', headers, payload: { payloads: [e] } });
    expect(decoded.json()).toEqual({ payloads: [plain] });
    await app.close();
  });

  it('answers the preflight for the UI origin only', async () => {
    const app = buildCodecServer({ keys, origins: [UI], token: 'secret' });
    const ok = await app.inject({
      method: 'OPTIONS',
      url: '/decode',
      headers: {
        origin: UI,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type,x-namespace',
      },
    });
    expect(ok.statusCode).toBe(204);
    expect(ok.headers['access-control-allow-headers']).toContain('x-namespace');
    const other = await app.inject({ method: 'OPTIONS', url: '/decode', headers: { origin: 'http://evil.example' } });
    expect(other.headers['access-control-allow-origin']).toBeUndefined();
    await app.close();
  });

  it('with a token, refuses a request without the bearer token', async () => {
    const app = buildCodecServer({ keys, origins: [UI], token: 'secret' });
    const body = { payloads: [jsonPayload(1)] };
    expect((await app.inject({ method: 'POST', url: '/encode', payload: body })).statusCode).toBe(401);
    expect(
      (await app.inject({ method: 'POST', url: '/encode', headers: { authorization: 'Bearer wrong!' }, payload: body }))
        .statusCode,
    ).toBe(401);
    expect(
      (await app.inject({ method: 'POST', url: '/encode', headers: { authorization: 'Bearer secret' }, payload: body }))
        .statusCode,
    ).toBe(200);
    await app.close();
  });

  it('a payload it cannot decrypt is a 400 naming the key', async () => {
    const app = buildCodecServer({ keys, origins: [UI] });
    const foreign = {
      metadata: {
        encoding: Buffer.from('binary/encrypted').toString('base64'),
        'encryption-key-id': Buffer.from('k0').toString('base64'),
      },
      data: 'AAAA',
    };
    const res = await app.inject({ method: 'POST', url: '/decode', payload: { payloads: [foreign] } });
    expect(res.statusCode).toBe(400);
    expect(res.json<{ error: string }>().error).toContain('payload encrypted with key "k0"');
    expect((await app.inject({ method: 'POST', url: '/decode', payload: { nope: 1 } })).statusCode).toBe(400);
    await app.close();
  });

  it('allows the Web UI origin under both loopback names, or the listed origins', () => {
    expect(codecOrigins({ webUiUrl: 'http://localhost:8233' }, {})).toEqual([
      'http://localhost:8233',
      'http://127.0.0.1:8233',
    ]);
    expect(
      codecOrigins(
        { webUiUrl: 'http://localhost:8233' },
        { HANDRAIL_CODEC_CORS_ORIGINS: 'https://ui.example.com/, http://a:1' },
      ),
    ).toEqual(['https://ui.example.com', 'http://a:1']);
  });
});
