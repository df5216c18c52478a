import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import standaloneCode from 'ajv/dist/standalone';
import { fullFormats } from 'ajv-formats/dist/formats';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  FIXTURE_DIR,
  GENERATED_DIR,
  ISO_TIME_PATTERN,
  SCHEMA_DIR,
  assertPatternedDateTimes,
  buildOutputs,
  createAjv,
  guardLengthChecks,
} from '../../../scripts/contracts/build';
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

describe('the length guard on generated validators', () => {
  // A schema of ajv's length checks alone, compiled as generate.ts does, with and without the guard.
  const compile = (guard: boolean) => {
    const ajv = createAjv({ standalone: true });
    ajv.addSchema({
      $id: 'urn:test:lengths',
      type: 'object',
      properties: {
        short: { type: 'string', minLength: 1, maxLength: 3 },
        wide: { type: 'string', minLength: 4, maxLength: 9 },
      },
    });
    const code = standaloneCode(ajv, { lengths: 'urn:test:lengths' });
    const module = { exports: {} as { lengths: (data: unknown) => boolean } };
    new Function('require', 'exports', 'module', guard ? guardLengthChecks(code) : code)(
      createRequire(__filename),
      module.exports,
      module,
    );
    return module.exports.lengths;
  };

  it('decides every string as ajv does, surrogate pairs and lone surrogates included', () => {
    const plain = compile(false);
    const guarded = compile(true);
    const text = fc.string({ unit: 'binary', maxLength: 20 });
    fc.assert(
      fc.property(text, text, (short, wide) => {
        expect(guarded({ short, wide })).toBe(plain({ short, wide }));
      }),
      { numRuns: 2000 },
    );
  });
});

describe('date-time, decided by its pattern', () => {
  const formatAccepts = (fullFormats['date-time'] as { validate: (s: string) => boolean }).validate;

  it("accepts nothing that ajv-formats would refuse: what matches isoTime's pattern is a valid date-time", () => {
    fc.assert(
      fc.property(fc.stringMatching(new RegExp(ISO_TIME_PATTERN)), (s) => {
        expect(formatAccepts(s)).toBe(true);
      }),
      { numRuns: 5000 },
    );
    // The calendar and offsets are the pattern's own: these fail it (and ajv-formats).
    for (const s of [
      '2026-02-29T00:00:00Z',
      '2026-04-31T00:00:00Z',
      '2026-01-01T24:00:00Z',
      '2026-01-01T00:00:00+24:00',
      '2026-01-01T00:00:00',
    ]) {
      expect(new RegExp(ISO_TIME_PATTERN).test(s), s).toBe(false);
      expect(formatAccepts(s), s).toBe(false);
    }
  });

  it('refuses to build a schema whose date-time lacks that pattern', () => {
    expect(() =>
      assertPatternedDateTimes({
        properties: { at: { type: 'string', format: 'date-time', pattern: ISO_TIME_PATTERN } },
      }),
    ).not.toThrow();
    expect(() =>
      assertPatternedDateTimes({ properties: { at: { type: 'string', format: 'date-time' } } }, 'x'),
    ).toThrow('x/properties/at: a date-time without');
  });
});
