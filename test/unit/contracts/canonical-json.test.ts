import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson, sameJson } from '../../../contracts/canonical-json';

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

  it('orders array-index keys first, as a copy built from sorted keys has them', () => {
    const value = JSON.parse('{"b":1,"10":2,"a":3,"2":4,"4294967295":5,"01":6}') as unknown;
    expect(canonicalJson(value)).toBe('{"2":4,"10":2,"01":6,"4294967295":5,"a":3,"b":1}');
  });

  it('writes the bytes JSON.stringify gives the key-sorted copy, for any value (property)', () => {
    // The definition the one-pass writer must match byte for byte: content addresses depend on it.
    const sortedCopy = (value: unknown): unknown => {
      if (Array.isArray(value)) return value.map(sortedCopy);
      if (value !== null && typeof value === 'object') {
        const withToJson = value as { toJSON?: () => unknown };
        if (typeof withToJson.toJSON === 'function') return sortedCopy(withToJson.toJSON());
        return Object.fromEntries(
          Object.keys(value)
            .sort()
            .map((key) => [key, sortedCopy((value as Record<string, unknown>)[key])]),
        );
      }
      return value;
    };
    const anyValue = fc.oneof(
      fc.anything({ withNullPrototype: true, withDate: true, withBoxedValues: true, withSparseArray: true }),
      fc.func(fc.integer()),
      fc.jsonValue(),
    );
    fc.assert(
      fc.property(anyValue, (value) => {
        expect(canonicalJson(value)).toBe(JSON.stringify(sortedCopy(value)));
      }),
      { numRuns: 2000 },
    );
  });

  it('sameJson: equal data whatever the key order, and nothing else (property)', () => {
    fc.assert(
      fc.property(jsonText, jsonText, (a, b) => {
        const [x, y] = [JSON.parse(a) as unknown, JSON.parse(b) as unknown];
        expect(sameJson(x, JSON.parse(a, reversedKeys))).toBe(true);
        expect(sameJson(x, y)).toBe(canonicalJson(x) === canonicalJson(y));
      }),
      { numRuns: 500 },
    );
  });
});
