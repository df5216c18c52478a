/** `validateHandoff`: the check the rail runs on every package, in the workflow sandbox. */
import { clip, toContractErrors } from './errors';
import type { ContractError, HandoffV1 } from './handoff';
import { LIMITS } from './limits';
import { createHandoffRegistry, type PackageObject, type VersionRegistry } from './versions';

export type RejectReason = 'schema' | 'version' | 'size';

export type HandoffValidation<T = HandoffV1> =
  | { ok: true; value: T }
  | { ok: false; reason: RejectReason; errors: ContractError[] };

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

/**
 * Size first (so hostile input is bounded before any regex runs), then version, then schema.
 * Never throws; never truncates; returns the package unchanged (unknown fields included) or,
 * when upgraded, the upgraded package.
 */
export function validateHandoff<T = HandoffV1>(pkg: unknown, options: ValidateOptions): HandoffValidation<T> {
  const registry = options.registry ?? defaultRegistry;

  let encoded: string | undefined;
  try {
    encoded = JSON.stringify(pkg);
  } catch {
    return reject('schema', '', 'must be JSON-serialisable');
  }
  if (encoded === undefined || pkg === null || typeof pkg !== 'object' || Array.isArray(pkg)) {
    return reject('schema', '', 'must be object');
  }
  const bytes = utf8Bytes(encoded);
  if (bytes > LIMITS.packageBytes) {
    return reject('size', '', `package is ${bytes} bytes; the limit is ${LIMITS.packageBytes}`);
  }

  const schema = (pkg as PackageObject).schema;
  if (schema === undefined) return reject('schema', '/schema', 'is required');
  if (typeof schema !== 'string') return reject('schema', '/schema', 'must be string');
  const named = JSON.stringify(clip(schema, 64));
  const version = registry.get(schema);
  if (!version) return reject('version', '/schema', `unknown version ${named}`);
  if (version.status === 'retired') return reject('version', '/schema', `retired version ${named}`);

  if (!version.validate(pkg)) return { ok: false, reason: 'schema', errors: toContractErrors(version.validate.errors) };
  if (options.accept.includes(schema)) return { ok: true, value: pkg as T };

  const upgrade = registry.upgradePath(schema, options.accept);
  if (!upgrade) return reject('version', '/schema', `version ${named} not accepted (accepts ${options.accept.join(', ')})`);
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
