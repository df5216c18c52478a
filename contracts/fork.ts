/**
 * A fork: a new job started from the package another job's rail recorded at one of its hops (its
 * snapshot), or from an edit of it. The fork runs under its own id, so what it carries over from
 * its parent is put in the fork's name: its job id, its trace, its entry's address (the same
 * bytes and hash, under the fork), and no reference to the parent's log (a log belongs to one
 * job). The rail translates the parent's records of the package's artifacts the same way when
 * it re-records them under the fork, so a critic's pass over the parent's package is a pass over
 * the fork's exactly when the content is the same. Pure: the rail computes this in workflow code.
 */
import { canonicalJson } from './canonical-json';
import { entryUri, parseEntryUri } from './entry';
import type { Artifact, HandoffV1 } from './handoff';
import { isTranscriptUri } from './transcript-uri';

/** The stage name under which the rail records an artifact an operator put on a fork's package
 * (an edit): evidence of the fork's own, never a verdict. */
export const FORK_EDIT_STAGE = 'fork-edit';

/** What a fork is called where its parent was. */
export interface ForkIdentity {
  job_id: string;
  traceparent: string;
}

/** The entry as the fork carries it: a stored entry under the fork's id (same hash); an inline one as is. */
export function forkedEntry(entry: Artifact, jobId: string): Artifact {
  const stored = parseEntryUri(entry.uri);
  return stored ? { ...entry, uri: entryUri(jobId, stored.sha) } : entry;
}

/** The parent's package (a snapshot, or a package a stage recorded) in the fork's name; the
 * rail's ack and snapshot address go, as on any package a job starts with. */
export function forkedPackage(pkg: HandoffV1, fork: ForkIdentity): HandoffV1 {
  const { ack: _ack, context_ref: _snapshot, ...rest } = pkg;
  const [entry, ...others] = pkg.artifacts;
  return {
    ...rest,
    job_id: fork.job_id,
    trace: { ...pkg.trace, traceparent: fork.traceparent },
    artifacts: entry ? [forkedEntry(entry, fork.job_id), ...others] : [],
    memory_refs: pkg.memory_refs.filter((ref) => !isTranscriptUri(ref)),
  };
}

/** What a critic's verdict covers of a package: everything but the rail's hop, ack and snapshot
 * address, the wallet, the summary (a running record, not evidence) and the verdict itself. */
export function forkContent(pkg: HandoffV1): string {
  const {
    hop: _hop,
    ack: _ack,
    context_ref: _snapshot,
    budget: _budget,
    summary: _summary,
    evaluator: _evaluator,
    ...content
  } = pkg;
  return canonicalJson(content);
}
