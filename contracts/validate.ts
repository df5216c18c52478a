/** `validateHandoff`: the check the rail runs on every package, in the workflow sandbox. */
import { clip, toContractErrors } from './errors';
import type { ContractError, HandoffV1 } from './handoff';
import { LIMITS } from './limits';
import { createHandoffRegistry, type PackageObject, type VersionRegistry } from './versions';

export type RejectReason = 'schema' | 'version' | 'size';

export type HandoffValidation<T = HandoffV1> =
  { ok: true; value: T } | { ok: false; reason: RejectReason; errors: ContractError[] };

export interface ValidateOptions {
  /** The `schema` versions this consumer reads; older ones are upgraded when the registry can. */
  accept: readonly string[];
  registry?: VersionRegistry;
}

const defaultRegistry = createHandoffRegistry();

const reject = (reason: RejectReason, path: string, message: string): HandoffValidation<never> => ({
  ok: false,
  reason,
  errors: [{ path, message: clip(message) }],
});

/** UTF-8 length of a string without TextEncoder, which the workflow sandbox may not offer. */
function utf8Bytes(s: string): number {
  let bytes = 0;
  for (let i = 0; i < s.length; i++) {
    const code = s.charCodeAt(i);
    if (code < 0x80) bytes += 1;
    else if (code < 0x800) bytes += 2;
    else if (code >= 0xd800 && code <= 0xdbff && i + 1 < s.length) {
      const next = s.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        bytes += 4;
        i++;
      } else bytes += 3;
    } else bytes += 3;
  }
  return bytes;
}

/** UTF-8 bytes of `JSON.stringify(s)`: quotes, two-byte escapes, `\u00XX` for other control
 * characters and `\uDXXX` for a lone surrogate (well-formed JSON.stringify). */
function jsonStringBytes(s: string): number {
  // One byte per character to start with; what JSON writes longer adds the difference.
  let bytes = s.length + 2;
  for (let i = 0; i < s.length; i++) {
    const code = s.charCodeAt(i);
    if (code >= 0x20 && code < 0x7f) {
      if (code === 0x22 || code === 0x5c) bytes += 1;
    } else if (code < 0x20)
      bytes += code === 0x08 || code === 0x09 || code === 0x0a || code === 0x0c || code === 0x0d ? 1 : 5;
    else if (code < 0x80) continue;
    else if (code < 0x800) bytes += 1;
    else if (code >= 0xd800 && code <= 0xdfff) {
      const next = i + 1 < s.length ? s.charCodeAt(i + 1) : 0;
      if (code <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
        bytes += 2; // a pair: 4 bytes for 2 characters
        i++;
      } else bytes += 5;
    } else bytes += 2;
  }
  return bytes;
}

// Deeper than any package; past it JSON.stringify decides (it may overflow the stack and refuse).
const MAX_PLAIN_DEPTH = 64;

// No JS number takes more characters than this in JSON (at most 25, e.g. -0.0000012345678901234567).
const NUMBER_BYTES_BOUND = 32;
// JSON spends at most 6 bytes on one UTF-16 unit (`\u001f`, a lone surrogate `\ud800`).
const UNIT_BYTES_BOUND = 6;

/** What plainJsonBytes answers for a value it leaves to JSON.stringify. */
const NOT_PLAIN = -1;

/**
 * UTF-8 bytes of `JSON.stringify(value)` without building the string, for plain JSON data (what
 * a Temporal payload decodes to); with `exact` false, a bound that is never below it, without
 * looking at a string's characters. NOT_PLAIN for anything else — a prototype other than
 * Object's or Array's, toJSON, bigint, a cycle, deep nesting — which the caller leaves to
 * JSON.stringify itself, so every value is measured or refused exactly as JSON.stringify would.
 * Always a number, and members by `for…in` (no key array): this walk runs on every package
 * twice a hop, and was a third of the check's time. `for…in` also visits Object.prototype's
 * enumerable keys, so packageSize walks only while it has none.
 */
function plainJsonBytes(value: unknown, exact: boolean, depth: number): number {
  switch (typeof value) {
    case 'string':
      return exact ? jsonStringBytes(value) : value.length * UNIT_BYTES_BOUND + 2;
    case 'number':
      return !Number.isFinite(value) ? 4 : exact ? String(value).length : NUMBER_BYTES_BOUND;
    case 'boolean':
      return value ? 4 : 5;
    case 'object':
      break;
    default:
      return NOT_PLAIN;
  }
  if (value === null) return 4;
  if (depth > MAX_PLAIN_DEPTH) return NOT_PLAIN;
  const proto = Object.getPrototypeOf(value) as unknown;
  if (Array.isArray(value)) {
    if (proto !== Array.prototype || typeof (value as { toJSON?: unknown }).toJSON === 'function') return NOT_PLAIN;
    let bytes = 2 + Math.max(0, value.length - 1);
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      // JSON writes null for what it cannot carry in an array.
      const itemBytes =
        item === undefined || typeof item === 'function' || typeof item === 'symbol'
          ? 4
          : plainJsonBytes(item, exact, depth + 1);
      if (itemBytes === NOT_PLAIN) return NOT_PLAIN;
      bytes += itemBytes;
    }
    return bytes;
  }
  if (proto !== Object.prototype && proto !== null) return NOT_PLAIN;
  let bytes = 2;
  let members = 0;
  for (const key in value) {
    const member: unknown = (value as Record<string, unknown>)[key];
    // An own toJSON is seen here; an inherited one only on a prototype packageSize refuses.
    if (key === 'toJSON' && typeof member === 'function') return NOT_PLAIN;
    // JSON leaves out a member it cannot carry.
    if (member === undefined || typeof member === 'function' || typeof member === 'symbol') continue;
    const memberBytes = plainJsonBytes(member, exact, depth + 1);
    if (memberBytes === NOT_PLAIN) return NOT_PLAIN;
    bytes += (exact ? jsonStringBytes(key) : key.length * UNIT_BYTES_BOUND + 2) + 1 + memberBytes;
    members++;
  }
  return bytes + Math.max(0, members - 1);
}

/** The package's compact JSON size in UTF-8 bytes (a bound when that is within the limit,
 * which is all the caller asks then), or why it has none. */
function packageSize(pkg: unknown): number | HandoffValidation<never> {
  if (
    pkg !== null &&
    typeof pkg === 'object' &&
    !Array.isArray(pkg) &&
    !('toJSON' in Object.prototype) &&
    Object.keys(Object.prototype).length === 0
  ) {
    let bytes = NOT_PLAIN;
    try {
      // Assigned once, after the pass that decides: a bound is never reported as the size.
      const bound = plainJsonBytes(pkg, false, 0);
      bytes = bound > LIMITS.packageBytes ? plainJsonBytes(pkg, true, 0) : bound;
    } catch {
      // A throwing getter or proxy: JSON.stringify below meets it too and refuses the package.
    }
    if (bytes !== NOT_PLAIN) return bytes;
  }
  let encoded: string | undefined;
  try {
    encoded = JSON.stringify(pkg);
  } catch {
    return reject('schema', '', 'must be JSON-serialisable');
  }
  if (encoded === undefined || pkg === null || typeof pkg !== 'object' || Array.isArray(pkg)) {
    return reject('schema', '', 'must be object');
  }
  return utf8Bytes(encoded);
}

/** A version as a refusal names it; only a refusal pays for quoting it. */
function quoted(schema: string): string {
  return JSON.stringify(clip(schema, 64));
}

/**
 * Size first (so hostile input is bounded before any regex runs), then version, then schema.
 * Never throws; never truncates; returns the package unchanged (unknown fields included) or,
 * when upgraded, the upgraded package.
 */
export function validateHandoff<T = HandoffV1>(pkg: unknown, options: ValidateOptions): HandoffValidation<T> {
  const registry = options.registry ?? defaultRegistry;

  const bytes = packageSize(pkg);
  if (typeof bytes !== 'number') return bytes;
  if (bytes > LIMITS.packageBytes) {
    return reject('size', '', `package is ${bytes} bytes; the limit is ${LIMITS.packageBytes}`);
  }

  const schema = (pkg as PackageObject).schema;
  if (schema === undefined) return reject('schema', '/schema', 'is required');
  if (typeof schema !== 'string') return reject('schema', '/schema', 'must be string');
  const version = registry.get(schema);
  if (!version) return reject('version', '/schema', `unknown version ${quoted(schema)}`);
  if (version.status === 'retired') return reject('version', '/schema', `retired version ${quoted(schema)}`);

  if (!version.validate(pkg)) return { ok: false, reason: 'schema', errors: toContractErrors(version.validate.errors) };
  if (options.accept.includes(schema)) return { ok: true, value: pkg as T };

  const upgrade = registry.upgradePath(schema, options.accept);
  if (!upgrade)
    return reject(
      'version',
      '/schema',
      `version ${quoted(schema)} not accepted (accepts ${options.accept.join(', ')})`,
    );
  let upgraded = pkg as PackageObject;
  for (const step of upgrade.steps) {
    try {
      upgraded = step.upgrade(upgraded);
    } catch {
      return reject('version', '/schema', `upgrade ${step.from} -> ${step.to} failed`);
    }
  }
  if (!upgrade.target.validate(upgraded)) {
    return { ok: false, reason: 'schema', errors: toContractErrors(upgrade.target.validate.errors) };
  }
  return { ok: true, value: upgraded as T };
}
