/** Maps ajv errors to the short, stable `{path, message}` list a `rejected_schema` ack carries. */
import type { ErrorObject } from 'ajv';
import type { ZodError } from 'zod';
import type { ContractError } from './handoff';
import { LIMITS } from './limits';

const MAX_MESSAGE = 120;

export const clip = (s: string, max = MAX_MESSAGE): string => (s.length > max ? `${s.slice(0, max - 1)}…` : s);

/** A zod error as `path: message` lines (at most `max`); `root` names the value itself. */
export function issueLines(error: ZodError, root = '/', max = Infinity): string[] {
  return error.issues.slice(0, max).map((i) => `${i.path.join('.') || root}: ${i.message}`);
}

/** Our own wording, so messages do not change with ajv versions and never echo long regexes. */
function messageOf(e: ErrorObject): string {
  const p = e.params as Record<string, unknown>;
  const isTraceparent = e.instancePath.endsWith('/traceparent');
  // The one `not` on an amount: a top-up below the wallet's unit (contracts/job.ts HumanDecision).
  const isUsd = e.instancePath.endsWith('/usd');
  switch (e.keyword) {
    case 'required':
      return 'is required';
    case 'type':
      return `must be ${String(p.type)}`;
    case 'const':
      return `must be ${JSON.stringify(p.allowedValue)}`;
    case 'enum':
      return `must be one of: ${(p.allowedValues as unknown[]).map(String).join(', ')}`;
    case 'maxLength':
      return `must be at most ${String(p.limit)} characters`;
    case 'minLength':
      return `must be at least ${String(p.limit)} characters`;
    case 'maxItems':
      return `must have at most ${String(p.limit)} items`;
    case 'minItems':
      return `must have at least ${String(p.limit)} items`;
    case 'maxProperties':
      return `must have at most ${String(p.limit)} properties`;
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum':
      return `must be ${String(p.comparison)} ${String(p.limit)}`;
    case 'format':
      return `must be a valid ${String(p.format)}`;
    case 'pattern':
      return isTraceparent
        ? 'must be a W3C traceparent (version-traceid-parentid-flags, lowercase hex)'
        : 'has an invalid format';
    case 'not':
      if (isTraceparent) return 'trace id and parent id must not be all zeros';
      return isUsd ? 'must be 0 or at least one micro-dollar (0.000001)' : 'has a forbidden value';
    default:
      return `fails ${e.keyword}`;
  }
}

function pathOf(e: ErrorObject): string {
  if (e.keyword === 'required')
    return `${e.instancePath}/${String((e.params as { missingProperty: unknown }).missingProperty)}`;
  if (e.keyword === 'propertyNames')
    return `${e.instancePath}/${String((e.params as { propertyName: unknown }).propertyName)}`;
  return e.instancePath;
}

/** A refused value's errors as `path: message` lines (at most `max`), the path dotted
 * (`entry.subject`) and `root` naming the value itself: how a workflow refuses its own input. */
export function refusalLines(
  errors: readonly ErrorObject[] | null | undefined,
  root: string,
  max: number = LIMITS.ackErrors,
): string[] {
  return toContractErrors(errors)
    .slice(0, max)
    .map((e) => `${e.path.slice(1).replaceAll('/', '.') || root}: ${e.message}`);
}

/** Deduplicated, in ajv's order (which follows the schema), capped at LIMITS.ackErrors. */
export function toContractErrors(errors: readonly ErrorObject[] | null | undefined): ContractError[] {
  const out: ContractError[] = [];
  const seen = new Set<string>();
  for (const e of errors ?? []) {
    const error = { path: clip(pathOf(e), LIMITS.shortText), message: clip(messageOf(e)) };
    const key = `${error.path}\u0000${error.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(error);
    if (out.length === LIMITS.ackErrors) break;
  }
  return out;
}
