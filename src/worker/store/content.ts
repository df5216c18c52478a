/** Content addressing for stored artifacts: canonical JSON, sha256, `handrail://artifacts/<hex>`. */
import { createHash } from 'node:crypto';

const ARTIFACT_URI_PREFIX = 'handrail://artifacts/';
const HEX64 = /^[0-9a-f]{64}$/;

export { canonicalJson } from '../../../contracts/canonical-json';

/** Native, for the worker's hot paths; contracts/sha256.ts is its pure twin for workflow code (the
 * same hex for the same text: an entry's address is computed by one and stored under by the other). */
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
