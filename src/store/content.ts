/** Content addressing for stored artifacts: canonical JSON, sha256, `handrail://artifacts/<hex>`. */
import { createHash } from 'node:crypto';

const ARTIFACT_URI_PREFIX = 'handrail://artifacts/';
const HEX64 = /^[0-9a-f]{64}$/;

/** JSON with object keys sorted at every depth, so equal bodies get equal bytes and one address. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object') {
    const withToJson = value as { toJSON?: () => unknown };
    if (typeof withToJson.toJSON === 'function') return sortKeys(withToJson.toJSON());
    const sorted: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) sorted[key] = sortKeys((value as Record<string, unknown>)[key]);
    return sorted;
  }
  return value;
}

export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

export function artifactUri(hex: string): string {
  return `${ARTIFACT_URI_PREFIX}${hex}`;
}

/** The sha256 hex of a `handrail://artifacts/<hex>` URI, or null for any other URI. */
export function parseArtifactUri(uri: string): string | null {
  if (!uri.startsWith(ARTIFACT_URI_PREFIX)) return null;
  const hex = uri.slice(ARTIFACT_URI_PREFIX.length);
  return HEX64.test(hex) ? hex : null;
}
