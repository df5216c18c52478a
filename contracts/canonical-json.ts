/** JSON with object keys sorted at every depth, so equal values get equal bytes: content
 * addresses in the store, and key-order-independent comparison in the rail. Pure, so workflow
 * code can use it. */
export function canonicalJson(value: unknown): string {
  return writePlain(value) ?? JSON.stringify(sortKeys(value));
}

/**
 * Whether two values are the same data whatever their key order. Most comparisons the rail makes
 * are of data a stage echoed back in the order it was sent, so the same `JSON.stringify` bytes
 * settle them without sorting; only a difference is looked at again in canonical form.
 */
export function sameJson(a: unknown, b: unknown): boolean {
  return a === b || JSON.stringify(a) === JSON.stringify(b) || canonicalJson(a) === canonicalJson(b);
}

/** The reference form, for what `writePlain` leaves alone (toJSON, other prototypes, bigint). */
function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object') {
    const withToJson = value as { toJSON?: () => unknown };
    if (typeof withToJson.toJSON === 'function') return sortKeys(withToJson.toJSON());
    // fromEntries defines own properties: assigning `__proto__` would set the prototype instead.
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((key) => [key, sortKeys((value as Record<string, unknown>)[key])]),
    );
  }
  return value;
}

/** What plain JSON data cannot hold as a member: JSON skips it in an object, writes null in an array. */
const SKIPPED = undefined;
/** What `writePlain` answers for a value it leaves to the reference form. */
const NOT_PLAIN = null;

/**
 * The canonical text of plain JSON data (what a Temporal payload decodes to) written in one pass,
 * without the sorted copy `sortKeys` builds: the same bytes, at a fraction of the cost on every
 * hop. NOT_PLAIN for anything else, which the reference form writes, so every value gets exactly
 * the bytes it always had.
 */
function writePlain(value: unknown): string | typeof SKIPPED | typeof NOT_PLAIN {
  switch (typeof value) {
    case 'string':
    case 'number':
    case 'boolean':
      return JSON.stringify(value);
    case 'undefined':
    case 'function':
    case 'symbol':
      return SKIPPED;
    case 'object':
      break;
    default:
      return NOT_PLAIN;
  }
  if (value === null) return 'null';
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return NOT_PLAIN;
  const proto = Object.getPrototypeOf(value) as unknown;
  if (Array.isArray(value)) {
    if (proto !== Array.prototype) return NOT_PLAIN;
    const items: string[] = [];
    for (const item of value) {
      const text = writePlain(item);
      if (text === NOT_PLAIN) return NOT_PLAIN;
      items.push(text ?? 'null');
    }
    return `[${items.join(',')}]`;
  }
  if (proto !== Object.prototype && proto !== null) return NOT_PLAIN;
  const members: string[] = [];
  for (const key of sortedKeys(value)) {
    const text = writePlain((value as Record<string, unknown>)[key]);
    if (text === NOT_PLAIN) return NOT_PLAIN;
    if (text !== SKIPPED) members.push(`${JSON.stringify(key)}:${text}`);
  }
  return `{${members.join(',')}}`;
}

/** An array index as a property key: JavaScript orders such keys first, ascending by number. */
const isIndexKey = (key: string) => {
  const n = Number(key) >>> 0;
  return n !== 0xffffffff && String(n) === key;
};

/** Keys in the order a copy built from sorted keys has them: JavaScript puts array-index keys
 * first (ascending, as `Object.keys` already lists them), then the rest in sorted order. */
function sortedKeys(value: object): string[] {
  const keys = Object.keys(value);
  let indices = 0;
  while (indices < keys.length && isIndexKey(keys[indices]!)) indices++;
  return indices === 0 ? keys.sort() : [...keys.slice(0, indices), ...keys.slice(indices).sort()];
}
