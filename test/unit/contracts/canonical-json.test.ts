import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../../contracts/canonical-json';

/** JSON text whose objects may hold `__proto__` keys: JSON.parse makes those own properties,
 * which an object literal or fast-check's own records would not. */
const jsonText: fc.Arbitrary<string> = fc.letrec<{ value: string }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.oneof(fc.integer(), fc.boolean(), fc.constant(null), fc.string()).map((v) => JSON.stringify(v)),
    fc.array(tie('value'), { maxLength: 4 }).map((items) => `[${items.join(',')}]`),
    fc
      .uniqueArray(
        fc.tuple(fc.oneof(fc.constant('__proto__'), fc.constant('constructor'), fc.string()), tie('value')),
        {
          maxLength: 4,
          selector: ([key]) => key,
        },
      )
      .map((entries) => `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',')}}`),
  ),
})).value;

/** JSON.parse reviver: the same object with its keys in reverse order (fromEntries keeps `__proto__` own). */
const reversedKeys = (_key: string, v: unknown) =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).reverse()) : v;

describe('canonicalJson', () => {
  it('keeps an own __proto__ key (JSON.parse makes one) instead of dropping it', () => {
    const value = JSON.parse('{"b":1,"__proto__":{"x":1}}') as unknown;
    expect(canonicalJson(value)).toBe('{"__proto__":{"x":1},"b":1}');
    expect(canonicalJson(value)).not.toBe(canonicalJson({ b: 1 }));
  });

  it('loses nothing and ignores key order, __proto__ keys included (property)', () => {
    fc.assert(
      fc.property(jsonText, (text) => {
        const value = JSON.parse(text) as unknown;
        const canonical = canonicalJson(value);
        expect(JSON.parse(canonical)).toEqual(value);
        expect(canonicalJson(JSON.parse(canonical))).toBe(canonical);
        expect(canonicalJson(JSON.parse(text, reversedKeys))).toBe(canonical);
      }),
      { numRuns: 300 },
    );
  });
});
