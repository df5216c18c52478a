/**
 * Immutable per-hop snapshots: the package exactly as the rail
 * delivered it at a hop — refused hops included — addressed by the sha256 of its canonical JSON
 * under its job, `handrail://snapshots/<job_id>/<sha256>`. The package carries its own snapshot's
 * address in `context_ref` and the hop's ack names it; the snapshot itself holds everything but
 * `context_ref` (an address cannot be part of what it addresses). Pure, so the rail computes
 * addresses in workflow code and a stage's worker stores the same bytes under the same address.
 */
import { canonicalJson } from './canonical-json';
import { sha256Hex } from './sha256';

const PREFIX = 'handrail://snapshots/';
const URI = /^handrail:\/\/snapshots\/(.+)\/([0-9a-f]{64})$/;

export interface Snapshot {
  uri: string;
  /** Canonical JSON of the package as delivered, less its `context_ref`. */
  content: string;
}

export const snapshotUri = (jobId: string, sha: string): string => `${PREFIX}${jobId}/${sha}`;

export function parseSnapshotUri(uri: string): { jobId: string; sha: string } | undefined {
  const m = URI.exec(uri);
  return m ? { jobId: m[1]!, sha: m[2]! } : undefined;
}

export const isSnapshotUri = (uri: string): boolean => URI.test(uri);

/** What a snapshot holds: the delivered package (or, refused as malformed, what arrived) less its own reference. */
export function snapshotContent(delivered: unknown): string {
  if (delivered !== null && typeof delivered === 'object' && !Array.isArray(delivered) && 'context_ref' in delivered) {
    const { context_ref: _own, ...rest } = delivered as Record<string, unknown>;
    return canonicalJson(rest);
  }
  return canonicalJson(delivered) ?? 'null';
}

export function snapshotOf(jobId: string, delivered: unknown): Snapshot {
  const content = snapshotContent(delivered);
  return { uri: snapshotUri(jobId, sha256Hex(content)), content };
}
