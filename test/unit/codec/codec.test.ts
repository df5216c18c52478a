import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import {
  AesGcmCodec,
  CodecConfigError,
  CodecKeyError,
  ENCRYPTED_ENCODING,
  KEY_ID_METADATA,
  codecKeysFromEnv,
  parseCodecKeys,
} from '../../../src/codec';

const key = (id: string) => ({ id, key: crypto.randomBytes(32).toString('base64') });
const keysJson = (...keys: { id: string; key: string }[]) => JSON.stringify({ keys });
const ticket = { subject: 'Charged twice for my annual plan', body: 'card ending 4242' };
const plain = (): Payload => defaultPayloadConverter.toPayload(ticket)!;
const text = (p: Payload) =>
  Buffer.concat([Buffer.from(p.data ?? []), ...Object.values(p.metadata ?? {}).map((v) => Buffer.from(v))]).toString(
    'latin1',
  );

describe('AesGcmCodec', () => {
  const old = key('k2026-06');
  const codec = new AesGcmCodec(parseCodecKeys(keysJson(old), 'test'));

  it('encrypts with the current key id in the metadata and no plaintext, and decodes back', async () => {
    const [encoded] = await codec.encode([plain()]);
    expect(Buffer.from(encoded!.metadata!.encoding!).toString()).toBe(ENCRYPTED_ENCODING);
    expect(Buffer.from(encoded!.metadata![KEY_ID_METADATA]!).toString()).toBe('k2026-06');
    expect(text(encoded!)).not.toContain('Charged twice');
    expect(defaultPayloadConverter.fromPayload((await codec.decode([encoded!]))[0]!)).toEqual(ticket);
  });

  it('after a rotation, encodes with the newest key and still decodes the old one', async () => {
    const [written] = await codec.encode([plain()]);
    const rotated = new AesGcmCodec(parseCodecKeys(keysJson(old, key('k2026-12')), 'test'));
    const [fresh] = await rotated.encode([plain()]);
    expect(Buffer.from(fresh!.metadata![KEY_ID_METADATA]!).toString()).toBe('k2026-12');
    expect(defaultPayloadConverter.fromPayload((await rotated.decode([written!]))[0]!)).toEqual(ticket);
  });

  it('"current" picks the encoding key among the listed ones', () => {
    const b = key('b');
    expect(parseCodecKeys(JSON.stringify({ current: 'a', keys: [key('a'), b] }), 'test').current).toBe('a');
  });

  it('refuses a tampered payload, naming its key', async () => {
    const [encoded] = await codec.encode([plain()]);
    const data = Buffer.from(encoded!.data!);
    data[20]! ^= 1;
    await expect(codec.decode([{ ...encoded!, data }])).rejects.toThrow(
      /key "k2026-06" failed authentication: it was altered/,
    );
    // Relabelled to another configured key: the key id is authenticated data, so that fails too.
    const two = new AesGcmCodec(parseCodecKeys(keysJson(old, key('other')), 'test'));
    const relabelled = { ...encoded!, metadata: { ...encoded!.metadata, [KEY_ID_METADATA]: Buffer.from('other') } };
    await expect(two.decode([relabelled])).rejects.toBeInstanceOf(CodecKeyError);
  });

  it('a missing key, or no keys at all, fails with the key id it needs', async () => {
    const [encoded] = await codec.encode([plain()]);
    const other = new AesGcmCodec(parseCodecKeys(keysJson(key('k2027')), 'test'));
    await expect(other.decode([encoded!])).rejects.toThrow(
      'payload encrypted with key "k2026-06", but the configured keys are k2027: add key "k2026-06"',
    );
    const err = (await new AesGcmCodec(undefined).decode([encoded!]).catch((e: unknown) => e)) as CodecKeyError;
    expect(err.message).toContain('payload encrypted with key "k2026-06", but no codec keys are configured');
    expect(err.keyId).toBe('k2026-06');
  });

  it('without keys, payloads pass through unchanged both ways', async () => {
    const none = new AesGcmCodec(undefined);
    const p = plain();
    expect(await none.encode([p])).toEqual([p]);
    expect(await none.decode([p])).toEqual([p]);
  });
});

describe('codec keys from the environment', () => {
  it('reads HANDRAIL_CODEC_KEYS or HANDRAIL_CODEC_KEYS_FILE, and nothing means no keys', () => {
    const k = key('a');
    expect(codecKeysFromEnv({})).toBeUndefined();
    expect(codecKeysFromEnv({ HANDRAIL_CODEC_KEYS: keysJson(k) })?.current).toBe('a');
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'codec-')), 'keys.json');
    fs.writeFileSync(file, keysJson(k));
    expect(codecKeysFromEnv({ HANDRAIL_CODEC_KEYS_FILE: file })?.keys.get('a')).toEqual(Buffer.from(k.key, 'base64'));
    expect(() => codecKeysFromEnv({ HANDRAIL_CODEC_KEYS: keysJson(k), HANDRAIL_CODEC_KEYS_FILE: file })).toThrow(
      'not both',
    );
    expect(() => codecKeysFromEnv({ HANDRAIL_CODEC_KEYS_FILE: `${file}.missing` })).toThrow(CodecConfigError);
  });

  it.each([
    ['not json', 'not JSON'],
    ['{"keys":[]}', 'non-empty array'],
    [
      JSON.stringify({ keys: [{ id: 'a', key: crypto.randomBytes(16).toString('base64') }] }),
      'is 16 bytes; AES-256 needs 32',
    ],
    [JSON.stringify({ keys: [{ id: 'a', key: 'not*base64' }] }), 'must be base64'],
    [JSON.stringify({ keys: [{ id: 'a b', key: crypto.randomBytes(32).toString('base64') }] }), 'id must be'],
    [
      keysJson(
        { id: 'a', key: crypto.randomBytes(32).toString('base64') },
        { id: 'a', key: crypto.randomBytes(32).toString('base64') },
      ),
      'appears twice',
    ],
    [
      JSON.stringify({ current: 'z', keys: [{ id: 'a', key: crypto.randomBytes(32).toString('base64') }] }),
      '"current" must name one of the keys (a)',
    ],
  ])('refuses %s', (json, why) => {
    expect(() => parseCodecKeys(json, 'HANDRAIL_CODEC_KEYS')).toThrow(why);
  });
});
