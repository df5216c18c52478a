import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { HANDOFF_V1, LIMITS, handoffV1, validateHandoff, type HandoffValidation } from '../../../contracts';
import { fixture, manifest, propertyPaths, readJson, withoutPath } from './helpers';

// Bounded so the suite stays fast; a failure prints the seed and path to replay it.
const RUNS = { numRuns: 300 };
const accept = [HANDOFF_V1];
const schema = readJson(manifest.schema) as Parameters<typeof propertyPaths>[0];
const bases = [fixture('valid.json'), fixture('seed-001-example.json')];
const paths = bases.map((b) => propertyPaths(schema, b));

/** Sets `value` at JSON Pointer `path` in a copy; skipped where an earlier mutation removed the parent. */
function setPath(target: unknown, path: string, value: unknown): unknown {
  const keys = path.split('/').slice(1);
  const last = keys.pop() as string;
  let node = target;
  for (const key of keys) {
    if (node === null || typeof node !== 'object') return target;
    node = (node as Record<string, unknown>)[key];
  }
  if (node !== null && typeof node === 'object') (node as Record<string, unknown>)[last] = value;
  return target;
}

function expectWellFormed(result: HandoffValidation, input: unknown) {
  if (result.ok) {
    expect(result.value).toBe(input);
    return;
  }
  expect(['schema', 'version', 'size']).toContain(result.reason);
  expect(result.errors.length).toBeGreaterThan(0);
  expect(result.errors.length).toBeLessThanOrEqual(LIMITS.ackErrors);
  for (const e of result.errors) {
    expect(typeof e.path).toBe('string');
    expect(e.message.length).toBeLessThanOrEqual(120);
  }
}

/** A base package with up to four fields (at any depth) replaced by random JSON, plus unknown keys. */
const mutated = (exclude: (path: string) => boolean = () => false) =>
  fc.integer({ min: 0, max: bases.length - 1 }).chain((i) => {
    const all = [...paths[i]!.required, ...paths[i]!.optional].filter((p) => !exclude(p));
    return fc.record({
      base: fc.constant(i),
      edits: fc.array(fc.tuple(fc.constantFrom(...all), fc.jsonValue({ maxDepth: 2 })), { maxLength: 4 }),
      extra: fc.dictionary(
        fc.string({ minLength: 1, maxLength: 8 }).map((k) => `x_${k}`),
        fc.jsonValue({ maxDepth: 2 }),
        { maxKeys: 3 },
      ),
    });
  });

describe('fuzzing validateHandoff', () => {
  it('never throws on arbitrary values and always returns a well-formed result', () => {
    fc.assert(
      fc.property(fc.oneof(fc.anything(), fc.jsonValue()), (input) => {
        expectWellFormed(validateHandoff(input, { accept }), input);
      }),
      RUNS,
    );
  });

  it('never throws on mutated packages, and accepts exactly what the zod source accepts', () => {
    fc.assert(
      fc.property(mutated(), ({ base, edits, extra }) => {
        let pkg = { ...(structuredClone(bases[base]) as object), ...extra };
        for (const [path, value] of edits) pkg = setPath(pkg, path, value) as typeof pkg;
        const result = validateHandoff(pkg, { accept });
        expectWellFormed(result, pkg);
        expect(result.ok).toBe(handoffV1.safeParse(pkg).success);
      }),
      RUNS,
    );
  });

  it('never accepts a mutated package that lacks a required field', () => {
    fc.assert(
      fc.property(
        fc
          .integer({ min: 0, max: bases.length - 1 })
          .chain((i) => fc.tuple(fc.constant(i), fc.constantFrom(...paths[i]!.required))),
        fc.array(fc.tuple(fc.nat(), fc.jsonValue({ maxDepth: 2 })), { maxLength: 4 }),
        ([base, dropped], edits) => {
          // Edits never touch the dropped field, its ancestors (which would rebuild it) or its subtree.
          const editable = [...paths[base]!.required, ...paths[base]!.optional].filter(
            (p) => !dropped.startsWith(p) && !p.startsWith(dropped),
          );
          let pkg = withoutPath(bases[base], dropped);
          for (const [n, value] of edits)
            if (editable.length) pkg = setPath(pkg, editable[n % editable.length]!, value);
          const result = validateHandoff(pkg, { accept });
          expectWellFormed(result, pkg);
          expect(result.ok).toBe(false);
        },
      ),
      RUNS,
    );
  });
});
