/**
 * A pipeline's entry: the artifact type of a job's first package, the schema its body (the job
 * request's `entry`) must meet, and the memory refs it gives the first package. The rail checks a
 * request's entry against it in workflow code and refuses the job, naming what is wrong, before
 * any stage sees it.
 *
 * The schema is a zod schema (anything with `safeParse`), or a precompiled validator (a function
 * answering true, or false with ajv's `errors`, as contracts/generated holds): zod builds its
 * schemas again in every workflow run, so a pipeline may keep zod out of its workflow bundle.
 */
import { toContractErrors } from './errors';
import type { StandaloneValidator } from './generated/validators';
import { LIMITS } from './limits';
import { isSlug } from './names';

interface SafeParseIssue {
  readonly path: readonly PropertyKey[];
  readonly message: string;
}

/** The part of a zod schema the rail calls. */
export interface SafeParseSchema {
  safeParse(value: unknown): { success: true } | { success: false; error: { issues: readonly SafeParseIssue[] } };
}

export type EntrySchema<T = unknown> = SafeParseSchema | StandaloneValidator<T>;

export interface EntrySpec<T = unknown> {
  /** Artifact type of the job's first package (a slug), e.g. `expense.v1`. */
  type: string;
  /** What the request's `entry` must be. */
  schema: EntrySchema<T>;
  /** Memory refs a valid entry gives the first package (e.g. `account:<id>` for the stages that
   * look an account up); none when unset. A method, so a spec typed by its body fits `EntrySpec`. */
  memoryRefs?(body: T): readonly string[];
  /** A request field that carried the entry before requests had `entry`: a request with it and
   * no `entry` is read as the entry (recorded histories keep their first package). */
  alias?: string;
}

const isFunction = (value: unknown): value is (...args: never[]) => unknown => typeof value === 'function';
const hasSafeParse = (value: unknown): value is SafeParseSchema =>
  typeof value === 'object' && value !== null && isFunction((value as { safeParse?: unknown }).safeParse);

/** Fields of a job request an alias may not take. */
const RESERVED_FIELDS: readonly string[] = [
  'job_id',
  'pipeline',
  'entry',
  'goal',
  'constraints',
  'budget',
  'max_hops',
  'traceparent',
  'owner',
  'decision_timeout',
];

/** Every problem with an entry declaration; empty means sound. */
export function entryProblems(entry: unknown): string[] {
  if (typeof entry !== 'object' || entry === null) {
    return [
      'the pipeline declares no entry: give entry: { type, schema } (the artifact type of the first package and the schema of its body)',
    ];
  }
  const { type, schema, memoryRefs } = entry as Partial<Record<keyof EntrySpec, unknown>>;
  const problems: string[] = [];
  if (!isSlug(type)) problems.push(`entry artifact type ${JSON.stringify(type)} is not a slug`);
  if (!isFunction(schema) && !hasSafeParse(schema))
    problems.push('entry schema must be a zod schema (with safeParse) or a precompiled validator function');
  if (memoryRefs !== undefined && !isFunction(memoryRefs))
    problems.push('entry memoryRefs must be a function of the entry body');
  const { alias } = entry as { alias?: unknown };
  if (alias !== undefined && (!isSlug(alias) || RESERVED_FIELDS.includes(alias))) {
    problems.push(`entry alias ${JSON.stringify(alias)} must be a slug naming no field a job request already has`);
  }
  return problems;
}

/** What is wrong with `body` under `schema`, each issue at its dotted path in the body ('' for the
 * body itself), at most `max`; empty when it is valid. */
export function entryBodyIssues(
  schema: EntrySchema,
  body: unknown,
  max: number = LIMITS.ackErrors,
): { path: string; message: string }[] {
  if (hasSafeParse(schema)) {
    const parsed = schema.safeParse(body);
    return parsed.success
      ? []
      : parsed.error.issues.slice(0, max).map((i) => ({ path: i.path.map(String).join('.'), message: i.message }));
  }
  if (schema(body)) return [];
  const issues = toContractErrors(schema.errors).map((e) => ({
    path: e.path.slice(1).replaceAll('/', '.'),
    message: e.message,
  }));
  return (issues.length > 0 ? issues : [{ path: '', message: "does not match the pipeline's entry schema" }]).slice(
    0,
    max,
  );
}

/** Why `body` is not a valid entry under `schema`, as `entry.<path>: message` lines (at most
 * `max`); empty when it is. */
export function entryBodyProblems(schema: EntrySchema, body: unknown, max: number = LIMITS.ackErrors): string[] {
  return entryBodyIssues(schema, body, max).map((i) => `${i.path ? `entry.${i.path}` : 'entry'}: ${i.message}`);
}

/** The memory refs an entry gives its job's first package: the pipeline's, when the body is an
 * object (a request not yet validated may carry anything). */
export function entryMemoryRefs(spec: Pick<EntrySpec, 'memoryRefs'>, body: unknown): string[] {
  if (!spec.memoryRefs || typeof body !== 'object' || body === null) return [];
  return [...spec.memoryRefs(body)];
}

/** A request's entry: its `entry`, else the field the pipeline's entry used to arrive in. */
export function requestEntry(request: Readonly<Record<string, unknown>>, spec: Pick<EntrySpec, 'alias'>): unknown {
  return request.entry === undefined && spec.alias !== undefined ? request[spec.alias] : request.entry;
}
