import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FIXTURE_DIR, GENERATED_DIR, SCHEMA_DIR, buildOutputs } from '../../../scripts/contracts/build';
import { root } from './helpers';

// Fails when a zod schema (or a fixture builder) changes without `npx tsx scripts/contracts/generate.ts`.
describe('generated contract files', () => {
  const outputs = buildOutputs();

  it.each([...outputs.keys()])('%s matches the zod source', (path) => {
    const file = join(root, path);
    expect(existsSync(file), `${path} missing: regenerate`).toBe(true);
    expect(readFileSync(file, 'utf8'), `${path} drifted: regenerate`).toBe(outputs.get(path));
  });

  it('has no committed file the source no longer produces', () => {
    const committed = [SCHEMA_DIR, GENERATED_DIR, FIXTURE_DIR].flatMap((dir) =>
      readdirSync(join(root, dir)).map((f) => `${dir}/${f}`),
    );
    expect(committed.filter((path) => !outputs.has(path))).toEqual([]);
  });

  it('gives every JSON Schema file $schema (Draft 2020-12) and a unique $id', () => {
    const schemas = [...outputs]
      .filter(([path]) => path.startsWith(`${SCHEMA_DIR}/`))
      .map(([, content]) => JSON.parse(content) as { $schema: string; $id: string });
    expect(schemas.every((s) => s.$schema === 'https://json-schema.org/draft/2020-12/schema')).toBe(true);
    expect(new Set(schemas.map((s) => s.$id)).size).toBe(schemas.length);
  });
});
