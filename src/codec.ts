/**
 * Payload encryption (docs/codec.md): an AES-256-GCM `PayloadCodec` in the data converter of the
 * client, the worker and replay, so the Temporal server stores only ciphertext. Keys come from
 * HANDRAIL_CODEC_KEYS (JSON) or HANDRAIL_CODEC_KEYS_FILE (a file holding the same JSON):
 *   {"current": "k2026-12", "keys": [{"id": "k2026-06", "key": "<base64, 32 bytes>"}, {"id": "k2026-12", "key": "…"}]}
 * `current` encodes (default: the last key); every listed key decodes, which is how a rotation
 * keeps old histories readable. With no keys configured payloads stay plain, and an encrypted
 * one is refused with the key id it needs instead of the converter's "unknown encoding".
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import type { DataConverter, Payload, PayloadCodec } from '@temporalio/common';
import { temporal } from '@temporalio/proto';

export const ENCRYPTED_ENCODING = 'binary/encrypted';
export const KEY_ID_METADATA = 'encryption-key-id';
const IV_BYTES = 12;
const TAG_BYTES = 16;

export interface CodecKeys {
  /** The key id new payloads are encrypted with. */
  current: string;
  /** Every configured key by id (the current one included). */
  keys: ReadonlyMap<string, Buffer>;
}

/** Keys that are not usable: the process refuses to start rather than write plaintext. */
export class CodecConfigError extends Error {
  override readonly name = 'CodecConfigError';
}

/** A payload that cannot be decrypted here: the key it names is absent, or it fails authentication. */
export class CodecKeyError extends Error {
  override readonly name = 'CodecKeyError';
  constructor(
    message: string,
    readonly keyId: string | undefined,
  ) {
    super(message);
  }
}

const KEY_SOURCES = 'HANDRAIL_CODEC_KEYS or HANDRAIL_CODEC_KEYS_FILE';

/** Checks the keys JSON; `source` names where it came from in the error. */
export function parseCodecKeys(text: string, source: string): CodecKeys {
  const fail = (why: string): never => {
    throw new CodecConfigError(
      `codec keys from ${source}: ${why} (expected {"keys":[{"id":"…","key":"<base64 of 32 bytes>"}], "current":"<id>"}; see docs/codec.md)`,
    );
  };
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    return fail(`not JSON: ${(err as Error).message}`);
  }
  const list = (json as { keys?: unknown } | null)?.keys;
  if (!Array.isArray(list) || list.length === 0) return fail('"keys" must be a non-empty array');
  const keys = new Map<string, Buffer>();
  for (const [i, entry] of list.entries()) {
    const { id, key } = (entry ?? {}) as { id?: unknown; key?: unknown };
    if (typeof id !== 'string' || !/^[\w.:-]{1,64}$/.test(id))
      fail(`keys[${i}].id must be 1–64 letters, digits or . _ : -`);
    if (keys.has(id as string)) fail(`key id "${String(id)}" appears twice`);
    // Strict base64: Buffer.from silently skips bad characters, which would shorten a key unnoticed.
    if (typeof key !== 'string' || !/^[A-Za-z0-9+/]+={0,2}$/.test(key)) fail(`keys[${i}].key must be base64`);
    const bytes = Buffer.from(key as string, 'base64');
    if (bytes.length !== 32) fail(`key "${String(id)}" is ${bytes.length} bytes; AES-256 needs 32`);
    keys.set(id as string, bytes);
  }
  const current = (json as { current?: unknown }).current ?? [...keys.keys()].at(-1);
  if (typeof current !== 'string' || !keys.has(current))
    fail(`"current" must name one of the keys (${[...keys.keys()].join(', ')})`);
  return { current: current as string, keys };
}

/** The configured keys, or undefined when none are (plain payloads). */
export function codecKeysFromEnv(env: NodeJS.ProcessEnv = process.env): CodecKeys | undefined {
  if (env.HANDRAIL_CODEC_KEYS && env.HANDRAIL_CODEC_KEYS_FILE)
    throw new CodecConfigError(`set one of ${KEY_SOURCES}, not both`);
  if (env.HANDRAIL_CODEC_KEYS) return parseCodecKeys(env.HANDRAIL_CODEC_KEYS, 'HANDRAIL_CODEC_KEYS');
  const file = env.HANDRAIL_CODEC_KEYS_FILE;
  if (!file) return undefined;
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new CodecConfigError(`HANDRAIL_CODEC_KEYS_FILE ${file}: ${(err as Error).message}`);
  }
  return parseCodecKeys(text, `HANDRAIL_CODEC_KEYS_FILE ${file}`);
}

const utf8 = (bytes: Uint8Array | null | undefined) => (bytes ? Buffer.from(bytes).toString('utf8') : undefined);

/** AES-256-GCM over the whole serialized payload (metadata too), the key id bound as associated data. */
export class AesGcmCodec implements PayloadCodec {
  constructor(private readonly config: CodecKeys | undefined) {}

  async encode(payloads: Payload[]): Promise<Payload[]> {
    const config = this.config;
    if (!config) return payloads;
    const key = config.keys.get(config.current)!;
    const keyId = Buffer.from(config.current);
    return payloads.map((payload) => {
      const iv = crypto.randomBytes(IV_BYTES);
      const cipher = crypto.createCipheriv('aes-256-gcm', key, iv).setAAD(keyId);
      const body = cipher.update(temporal.api.common.v1.Payload.encode(payload).finish());
      return {
        metadata: { encoding: Buffer.from(ENCRYPTED_ENCODING), [KEY_ID_METADATA]: keyId },
        data: Buffer.concat([iv, body, cipher.final(), cipher.getAuthTag()]),
      };
    });
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => {
      if (utf8(payload.metadata?.encoding) !== ENCRYPTED_ENCODING) return payload;
      const keyId = utf8(payload.metadata?.[KEY_ID_METADATA]);
      if (!keyId)
        throw new CodecKeyError('an encrypted payload carries no encryption-key-id; it cannot be decrypted', undefined);
      const key = this.config?.keys.get(keyId);
      if (!key) {
        const have = this.config
          ? `the configured keys are ${[...this.config.keys.keys()].join(', ')}`
          : 'no codec keys are configured';
        throw new CodecKeyError(
          `payload encrypted with key "${keyId}", but ${have}: add key "${keyId}" to ${KEY_SOURCES} (docs/codec.md)`,
          keyId,
        );
      }
      const data = Buffer.from(payload.data ?? []);
      try {
        if (data.length < IV_BYTES + TAG_BYTES) throw new Error('too short');
        const decipher = crypto
          .createDecipheriv('aes-256-gcm', key, data.subarray(0, IV_BYTES))
          .setAAD(Buffer.from(keyId));
        decipher.setAuthTag(data.subarray(data.length - TAG_BYTES));
        const plain = Buffer.concat([
          decipher.update(data.subarray(IV_BYTES, data.length - TAG_BYTES)),
          decipher.final(),
        ]);
        return temporal.api.common.v1.Payload.decode(plain);
      } catch {
        throw new CodecKeyError(
          `payload encrypted with key "${keyId}" failed authentication: it was altered, or key "${keyId}" here is not the key it was written with`,
          keyId,
        );
      }
    });
  }
}

/**
 * The data converter every handrail process uses: client, worker, replay, bench. It always holds
 * the codec, so that without keys an encrypted payload fails with a message naming its key.
 */
export function handrailDataConverter(keys: CodecKeys | undefined = codecKeysFromEnv()): DataConverter {
  return { payloadCodecs: [new AesGcmCodec(keys)] };
}
