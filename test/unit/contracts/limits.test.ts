import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { HANDOFF_V1, LIMITS, validateHandoff } from '../../../contracts';
import { fixture } from './helpers';

const accept = [HANDOFF_V1];
const valid = fixture('valid.json') as Record<string, unknown>;
const size = (pkg: unknown) => Buffer.byteLength(JSON.stringify(pkg), 'utf8');

/** `valid` plus an unknown field padded with `char` until the package is exactly `bytes` long. */
function paddedTo(bytes: number, char: string) {
  const pkg = { ...valid, x_note: '' };
  const room = bytes - size(pkg);
  const charBytes = Buffer.byteLength(char, 'utf8');
  pkg.x_note = char.repeat(Math.floor(room / charBytes)) + 'x'.repeat(room % charBytes);
  expect(size(pkg)).toBe(bytes);
  return pkg;
}

describe('size and length caps', () => {
  it('accepts a package of exactly the byte cap and rejects one byte more, counting unknown fields', () => {
    expect(validateHandoff(paddedTo(LIMITS.packageBytes, 'x'), { accept }).ok).toBe(true);
    expect(validateHandoff(paddedTo(LIMITS.packageBytes + 1, 'x'), { accept })).toEqual({
      ok: false,
      reason: 'size',
      errors: [
        { path: '', message: `package is ${LIMITS.packageBytes + 1} bytes; the limit is ${LIMITS.packageBytes}` },
      ],
    });
  });

  it('counts UTF-8 bytes, not characters (2-, 3- and 4-byte characters)', () => {
    for (const char of ['é', '€', '😀']) {
      expect(validateHandoff(paddedTo(LIMITS.packageBytes, char), { accept }).ok).toBe(true);
      expect(validateHandoff(paddedTo(LIMITS.packageBytes + 1, char), { accept })).toMatchObject({
        ok: false,
        reason: 'size',
      });
    }
  });

  it('rejects an oversize package without returning any part of it', () => {
    const result = validateHandoff(fixture('oversize.json'), { accept });
    expect(result).not.toHaveProperty('value');
    expect(JSON.stringify(result).length).toBeLessThan(200);
  });

  it.each([
    ['/goal', { goal: 'g'.repeat(LIMITS.goal + 1) }, `must be at most ${LIMITS.goal} characters`],
    ['/summary', { summary: 's'.repeat(LIMITS.summary + 1) }, `must be at most ${LIMITS.summary} characters`],
    [
      '/constraints/0',
      { constraints: ['c'.repeat(LIMITS.shortText + 1)] },
      `must be at most ${LIMITS.shortText} characters`,
    ],
    [
      '/constraints',
      { constraints: Array(LIMITS.listItems + 1).fill('c') },
      `must have at most ${LIMITS.listItems} items`,
    ],
    [
      '/hop/chain',
      { hop: { ...(valid.hop as object), chain: Array(LIMITS.chain + 1).fill('draft') } },
      `must have at most ${LIMITS.chain} items`,
    ],
    ['/job_id', { job_id: 'j'.repeat(LIMITS.id + 1) }, `must be at most ${LIMITS.id} characters`],
  ])('caps %s', (path, patch, message) => {
    const result = validateHandoff({ ...valid, ...patch }, { accept });
    expect(result).toMatchObject({ ok: false, reason: 'schema' });
    expect(result.ok ? [] : result.errors).toContainEqual({ path, message });
  });

  it('caps the error list a rejected_schema ack carries, each message short', () => {
    const broken = { ...valid, constraints: Array(40).fill(1), memory_refs: Array(40).fill(2) };
    const result = validateHandoff(broken, { accept });
    expect(result.ok ? [] : result.errors).toHaveLength(LIMITS.ackErrors);
    expect(result.ok ? [] : result.errors.every((e) => e.message.length <= 120)).toBe(true);
  });

  it('does not echo a long hostile version string back in full', () => {
    const result = validateHandoff({ ...valid, schema: 'v'.repeat(10_000) }, { accept });
    expect(result).toMatchObject({ ok: false, reason: 'version' });
    expect(result.ok ? 0 : result.errors[0]?.message.length).toBeLessThanOrEqual(120);
  });

  it.each([
    ['null', null],
    ['an array', [valid]],
    ['a string', 'handoff.v1'],
    ['undefined', undefined],
  ])('rejects %s as schema at the root', (_name, input) => {
    expect(validateHandoff(input, { accept })).toEqual({
      ok: false,
      reason: 'schema',
      errors: [{ path: '', message: 'must be object' }],
    });
  });

  it('rejects a value JSON cannot carry instead of throwing', () => {
    const cyclic: Record<string, unknown> = { ...valid };
    cyclic.self = cyclic;
    expect(validateHandoff(cyclic, { accept })).toMatchObject({ ok: false, reason: 'schema' });
    expect(validateHandoff({ ...valid, big: 1n }, { accept })).toMatchObject({ ok: false, reason: 'schema' });
  });

  it('measures any value as the UTF-8 bytes of JSON.stringify, or refuses it as JSON.stringify does', () => {
    // Oversize on purpose, so the refusal names the size validateHandoff measured.
    const pad = 'x'.repeat(LIMITS.packageBytes);
    const values = fc.anything({
      stringUnit: 'binary',
      withBoxedValues: true,
      withNullPrototype: true,
      withBigInt: true,
      withDate: true,
      withMap: true,
      withSet: true,
      withTypedArray: true,
      withSparseArray: true,
      withObjectString: true,
    });
    const strings = fc.string({ unit: 'binary', maxLength: 40 }).map((s) => s + String.fromCharCode(0xd800)); // ends on a lone surrogate
    fc.assert(
      fc.property(
        fc.dictionary(fc.string({ unit: 'binary', maxLength: 6 }), fc.oneof(values, strings), { maxKeys: 4 }),
        (extra) => {
          const pkg = { ...valid, ...extra, x_pad: pad };
          let expected: number | undefined;
          try {
            expected = Buffer.byteLength(JSON.stringify(pkg), 'utf8');
          } catch {
            expected = undefined;
          }
          const result = validateHandoff(pkg, { accept });
          if (expected === undefined)
            expect(result).toEqual({
              ok: false,
              reason: 'schema',
              errors: [{ path: '', message: 'must be JSON-serialisable' }],
            });
          else
            expect(result).toMatchObject({
              ok: false,
              reason: 'size',
              errors: [{ message: `package is ${expected} bytes; the limit is ${LIMITS.packageBytes}` }],
            });
        },
      ),
      { numRuns: 300 },
    );
  });

  it('measures a throwing getter, a toJSON and deep nesting as JSON.stringify does', () => {
    const throwing = {
      ...valid,
      get boom(): never {
        throw new Error('no');
      },
    };
    expect(validateHandoff(throwing, { accept })).toMatchObject({ ok: false, reason: 'schema' });
    const withToJson = { ...valid, x: { toJSON: () => 'y'.repeat(LIMITS.packageBytes) } };
    expect(validateHandoff(withToJson, { accept })).toMatchObject({
      ok: false,
      reason: 'size',
      errors: [{ message: `package is ${size(withToJson)} bytes; the limit is ${LIMITS.packageBytes}` }],
    });
    let deep: unknown = 'z'.repeat(LIMITS.packageBytes);
    for (let i = 0; i < 200; i++) deep = [deep];
    const nested = { ...valid, x: deep };
    expect(validateHandoff(nested, { accept })).toMatchObject({
      ok: false,
      reason: 'size',
      errors: [{ message: `package is ${size(nested)} bytes; the limit is ${LIMITS.packageBytes}` }],
    });
  });

  it('never reports the bound as the size: a getter that throws on the exact pass is refused as JSON.stringify refuses it', () => {
    // 30,000 ASCII units: a bound of 180,000 bytes (over the limit) and 30,000 exact (within it).
    let reads = 0;
    const flaky = {
      ...valid,
      get x(): string {
        if (++reads > 1) throw new Error('gone');
        return 'a'.repeat(30_000);
      },
    };
    expect(validateHandoff(flaky, { accept })).toEqual({
      ok: false,
      reason: 'schema',
      errors: [{ path: '', message: 'must be JSON-serialisable' }],
    });
  });

  it('measures as JSON.stringify does when Object.prototype has an enumerable key (which JSON leaves out)', () => {
    const exact = paddedTo(LIMITS.packageBytes, 'x');
    const proto = Object.prototype as Record<string, unknown>;
    proto.polluted = 'p'.repeat(64);
    try {
      expect(validateHandoff(exact, { accept })).toMatchObject({ ok: true });
      const over = { ...exact, y: 1 };
      expect(validateHandoff(over, { accept })).toMatchObject({
        ok: false,
        reason: 'size',
        errors: [{ message: `package is ${size(over)} bytes; the limit is ${LIMITS.packageBytes}` }],
      });
    } finally {
      delete proto.polluted;
    }
  });
});
