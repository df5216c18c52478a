/** JSON with object keys sorted at every depth, so equal values get equal bytes: content
 * addresses in the store, and key-order-independent comparison in the rail. Pure, so workflow
 * code can use it. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

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
