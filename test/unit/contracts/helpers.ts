import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Reason } from '../../../scripts/contracts/fixtures';
import { createAjv } from '../../../scripts/contracts/build';

export const root = resolve(__dirname, '../../..');
export const readJson = (path: string): unknown => JSON.parse(readFileSync(join(root, path), 'utf8'));

export interface PackageExpectation {
  file: string;
  expect: 'accept' | 'reject';
  reason?: Reason;
  path?: string;
  json_schema: 'accept' | 'reject';
  rail?: string;
}
interface Manifest {
  schema: string;
  packages: PackageExpectation[];
  artifacts: { file: string; schema: string }[];
}
export const manifest = readJson('contracts/fixtures/manifest.json') as Manifest;
export const fixture = (file: string) => readJson(`contracts/fixtures/${file}`);

/** A validator compiled at test time from the committed JSON Schema file, as a non-TS consumer
 * would; deliberately not the standalone code the rail uses. */
export function committedSchemaValidator(schemaPath: string) {
  return createAjv({ standalone: false }).compile(readJson(schemaPath) as object);
}

type JsonSchema = { type?: string; properties?: Record<string, JsonSchema>; required?: string[]; items?: JsonSchema };

/** Every property present in `instance`, as a JSON Pointer, split by whether the schema marks it
 * required. Walks nested objects and the first element of arrays. */
export function propertyPaths(
  schema: JsonSchema,
  instance: unknown,
  at = '',
): { required: string[]; optional: string[] } {
  const out = { required: [] as string[], optional: [] as string[] };
  if (Array.isArray(instance) && schema.items && instance.length > 0) {
    return propertyPaths(schema.items, instance[0], `${at}/0`);
  }
  if (instance === null || typeof instance !== 'object' || !schema.properties) return out;
  for (const [key, sub] of Object.entries(schema.properties)) {
    if (!(key in instance)) continue;
    const path = `${at}/${key}`;
    (schema.required?.includes(key) ? out.required : out.optional).push(path);
    const nested = propertyPaths(sub, (instance as Record<string, unknown>)[key], path);
    out.required.push(...nested.required);
    out.optional.push(...nested.optional);
  }
  return out;
}

/** A deep copy of `value` without the property at JSON Pointer `path`. */
export function withoutPath(value: unknown, path: string): unknown {
  const copy = structuredClone(value);
  const keys = path.split('/').slice(1);
  const last = keys.pop() as string;
  let node = copy as Record<string, unknown>;
  for (const key of keys) node = node[key] as Record<string, unknown>;
  delete node[last];
  return copy;
}
