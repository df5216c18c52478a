/**
 * The job's entry by reference (redact; pass references, not payloads). A job's first package
 * carries the request's entry inline, as a `data:` URI, because the workflow cannot write to the store.
 * The first stage to receive it moves the bytes to the store under the job,
 * `handrail://entries/<job_id>/<sha256>`, and every later package carries only that address and
 * hash. Pure, so the rail checks the move in workflow code: same type and schema, the job's own
 * address, the hash of exactly the bytes that were inline.
 */
import { canonicalJson } from './canonical-json';
import type { Artifact } from './handoff';
import { sha256Hex } from './sha256';

const PREFIX = 'handrail://entries/';
const URI = /^handrail:\/\/entries\/(.+)\/([0-9a-f]{64})$/;
/** A `data:` URI: media type, parameters, `;base64` right before the first comma, payload. */
export const DATA_URI = /^data:([^,;]*)((?:;[^,;]*)*?)(;base64)?,(.*)$/s;
// The rail tests a private copy: exported RegExps are frozen in the workflow bundle (contracts/names.ts).
const DATA = new RegExp(DATA_URI);

export const entryUri = (jobId: string, sha: string): string => `${PREFIX}${jobId}/${sha}`;

export function parseEntryUri(uri: string): { jobId: string; sha: string } | undefined {
  const m = URI.exec(uri);
  return m ? { jobId: m[1]!, sha: m[2]! } : undefined;
}

/** The text an inline (percent-encoded `data:`) artifact carries, or undefined for any other.
 * Percent-encoded only: the workflow sandbox has no base64 decoder, and the rail's own first
 * package is percent-encoded. A base64 entry (a direct delivery's) stays inline. */
export function inlineText(artifact: Pick<Artifact, 'uri'> | undefined): string | undefined {
  const m = artifact ? DATA.exec(artifact.uri) : null;
  if (!m || m[3] !== undefined) return undefined;
  try {
    return decodeURIComponent(m[4]!);
  } catch {
    return undefined;
  }
}

/** The reference an inline entry becomes once its text is stored for `jobId`: the same artifact
 * (type, schema, any other field) at the store address, with the text's hash (`sha`: the one the
 * store already took, so the worker hashes once). */
export function storedEntry(jobId: string, inline: Artifact, text: string, sha: string = sha256Hex(text)): Artifact {
  return { ...inline, uri: entryUri(jobId, sha), hash: `sha256:${sha}` };
}

/** Is `after` the entry `before` moved to the store for `jobId` (and nothing else changed)? */
export function isStoredEntryOf(jobId: string, before: Artifact | undefined, after: Artifact | undefined): boolean {
  const text = inlineText(before);
  if (text === undefined || !before || !after) return false;
  return canonicalJson(after) === canonicalJson(storedEntry(jobId, before, text));
}
