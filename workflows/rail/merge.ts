/**
 * A fan-out's join, pure: which branch failed, and the package the stage after the merge gets.
 * The hub's package gains every branch's artifact in the fan-out's order (each specialist owns its
 * partition, so nothing collides), their tools and questions, and the merged artifact last; the
 * merge is one rail step (`merge` in the chain) after the branches' transfers.
 */
import {
  LIMITS,
  MERGE_STAGE,
  SUMMARY_SEPARATOR,
  isTranscriptUri,
  lastSegment,
  splitSummary,
  type AckRecord,
  type Artifact,
  type FanOutRule,
  type HandoffV1,
  type Hop,
  type MergedBranches,
} from '../../contracts/rail';
import { chainLength, keptChain } from './hop-chain';
import type { Branch } from './routing';

/** The record key of a fan-out's merge: `job_id:merge:<artifact_type>` (one per job and type). */
export const mergeKey = (jobId: string, rule: Pick<FanOutRule, 'merge'>): string =>
  `${jobId}:${MERGE_STAGE}:${rule.merge}`;

/** The branches in the fan-out's order (they finish in any order). */
export function inFanOutOrder(rule: Pick<FanOutRule, 'fanOut'>, branches: readonly Branch[]): Branch[] {
  return rule.fanOut.flatMap((stage) => branches.filter((b) => b.stage === stage));
}

/** The first branch, in the fan-out's order, that was refused or failed; undefined when all answered. */
export function failedBranch(rule: Pick<FanOutRule, 'fanOut'>, branches: readonly Branch[]): Branch | undefined {
  return inFanOutOrder(rule, branches).find((b) => !b.outcome.ok);
}

/** Why the hub escalates: the branch named, with its own refusal or failure. */
export function branchFailure(rule: Pick<FanOutRule, 'after'>, failed: Branch): string {
  const last = failed.outcome.acks[failed.outcome.acks.length - 1];
  const why = failed.outcome.failure ?? (last ? `${last.ack}: ${last.reason}` : 'no answer');
  return `branch "${failed.stage}" of the fan-out after ${rule.after} did not answer: ${why}`.slice(
    0,
    LIMITS.shortText,
  );
}

/** The merge's hop: from the hub, through every branch, to the merge (each branch a transfer).
 * `hub`: the hub's hop when the fan-out began; `current`: the job's hop now, which a human's hop
 * after a refused branch may have followed (those stages stay in the chain, once, in order). */
export function mergeHop(
  hub: Hop | undefined,
  rule: Pick<FanOutRule, 'fanOut' | 'reason'>,
  current: Hop | undefined = hub,
): Hop {
  const chain = current?.chain ?? [];
  const since = sinceHub(hub, current);
  return {
    from: hub?.to ?? MERGE_STAGE,
    to: MERGE_STAGE,
    reason: `merged ${rule.fanOut.join(', ')}: ${rule.reason}`.slice(0, LIMITS.shortText),
    count: (hub?.count ?? 0) + rule.fanOut.length,
    ...keptChain([...chain, ...rule.fanOut.filter((stage) => !since.includes(stage)), MERGE_STAGE], current?.earlier),
  };
}

/** The chain's entries since the hub's hop (however many older entries left the chain meanwhile). */
function sinceHub(hub: Hop | undefined, current: Hop | undefined): string[] {
  if (!current) return [];
  const added = chainLength(current) - (hub ? chainLength(hub) : 0);
  return added <= 0 ? [] : current.chain.slice(-added);
}

/** The hop a fan-out's refused branch leaves the job at, for the human it escalates to: after
 * the branches that answered (listed once since the fan-out began), at the hop they ran at. */
export function branchesHop(
  hub: Hop | undefined,
  current: Hop | undefined,
  answered: readonly string[],
): Hop | undefined {
  if (!hub || !current) return current;
  const since = sinceHub(hub, current);
  const added = answered.filter((stage) => !since.includes(stage));
  return {
    ...current,
    ...(added.length > 0 ? { to: added[added.length - 1]! } : {}),
    count: hub.count + 1,
    ...keptChain([...current.chain, ...added], current.earlier),
  };
}

/** The body of the merged artifact: each branch's artifact by reference. */
export function mergedBody(rule: Pick<FanOutRule, 'after' | 'fanOut'>, branches: readonly Branch[]): MergedBranches {
  return {
    after: rule.after,
    branches: inFanOutOrder(rule, branches).map((b) => ({ stage: b.stage, artifact: b.outcome.result!.artifact })),
  };
}

/**
 * The package after the merge, less the merged artifact (the merge activity appends it): the
 * hub's package as the rail holds it (its wallet charged for every branch, its summary), plus what
 * each branch added in the fan-out's order.
 */
export function mergedPackage(
  hub: HandoffV1,
  rule: FanOutRule,
  branches: readonly Branch[],
  hop: Hop,
  ack: AckRecord,
): HandoffV1 {
  const added = <T>(pick: (p: HandoffV1) => readonly T[]) =>
    inFanOutOrder(rule, branches).flatMap((b) =>
      b.outcome.result ? pick(b.outcome.result.package).slice(pick(hub).length) : [],
    );
  const unique = <T>(items: readonly T[]) => [...new Set(items)];
  return {
    ...hub,
    // Not capped here: past the contract's cap the next hop is refused (rejected_schema), visibly.
    artifacts: [...hub.artifacts, ...inFanOutOrder(rule, branches).map((b): Artifact => b.outcome.result!.artifact)],
    tools_tried: [...hub.tools_tried, ...added((p) => p.tools_tried)].slice(-LIMITS.listItems),
    open_questions: unique([...hub.open_questions, ...added((p) => p.open_questions)]).slice(-LIMITS.listItems),
    // A stage replaces the log's ref in place, so the branches' own refs are a set difference;
    // their log refs are joined into one by the merge activity.
    memory_refs: unique([
      ...hub.memory_refs,
      ...inFanOutOrder(rule, branches).flatMap(
        (b) =>
          b.outcome.result?.package.memory_refs.filter((r) => !hub.memory_refs.includes(r) && !isTranscriptUri(r)) ??
          [],
      ),
    ]).slice(-LIMITS.listItems),
    hop,
    ack,
  };
}

/**
 * The summary segments the branches added, in the fan-out's order, for the merge to append to the
 * hub's summary. Every branch was delivered the hub's summary (a fan-out changes only the hub's
 * wallet, and a refused branch adds nothing), so a branch's segments are what follows it; a
 * branch that moved earlier segments to the store starts with a reference instead, and its own
 * segment is its newest.
 */
export function branchSegments(
  hub: Pick<HandoffV1, 'summary'>,
  rule: Pick<FanOutRule, 'fanOut'>,
  branches: readonly Branch[],
): string[] {
  const was = hub.summary ?? '';
  return inFanOutOrder(rule, branches).flatMap((b) => {
    const own = b.outcome.result?.package.summary;
    if (own === undefined) return [];
    if (!own.startsWith(was)) return own ? [lastSegment(own)!] : [];
    const tail = own.slice(was.length);
    return splitSummary(tail.startsWith(SUMMARY_SEPARATOR) ? tail.slice(SUMMARY_SEPARATOR.length) : tail);
  });
}
