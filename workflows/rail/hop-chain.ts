/**
 * Hop bookkeeping: who handed to whom, the chain, the cap and cycle detection.
 *
 * A package's `hop` block describes the hop that delivered it to its current holder; after a
 * stage emits, `hop.to` is that stage, so the next hop goes `from: hop.to`. `count` counts
 * transfers between stages: the first delivery (from the client) is hop 0, so the planned relay
 * intake → retrieve → draft → judge → writeback takes 4 and each revision 2 more, inside the default cap of 8.
 */
import {
  HUMAN,
  newestArtifact,
  type HandoffReason,
  type HandoffV1,
  type Hop,
  type Pipeline,
  type RevisitEdge,
} from '../../contracts/rail';

export { HUMAN };

export const DEFAULT_MAX_HOPS = 8;
/** Sender of the first hop of a job. */
export const ORIGIN = 'client';

export function nextHop(
  current: Hop | undefined,
  to: string,
  reason: string,
  by: string = current?.to ?? ORIGIN,
  handoff?: HandoffReason,
): Hop {
  const transfer = current !== undefined;
  return {
    from: by,
    to,
    reason,
    count: (current?.count ?? 0) + (transfer && by !== HUMAN && to !== HUMAN ? 1 : 0),
    chain: [...(current?.chain ?? [ORIGIN]), to],
    ...(handoff ? { handoff_reason: handoff } : {}),
  };
}

/**
 * The stage whose edge a hop crosses (its handover options): the sender — or, when a human sent
 * the work on (approve, top-up, revise), the stage that made the package's newest artifact, so a
 * resumed hop gets the handover (and the cap) of the edge the routing table would have taken.
 */
export function edgeSender(pipeline: Pick<Pipeline, 'get'>, hop: Hop, pkg: Pick<HandoffV1, 'artifacts'>): string {
  if (hop.from !== HUMAN) return hop.from;
  const newest = newestArtifact(pkg)?.type;
  const maker = hop.chain
    .slice(0, -1)
    .reverse()
    .find((stage) => newest !== undefined && pipeline.get(stage)?.outputs.includes(newest));
  return maker ?? hop.from;
}

/**
 * True when `hop` revisits a stage without a planned edge (the A→B→A bounce), or takes a planned
 * edge more often than its bound allows. Edges bounded by `revisions` are paid from the wallet
 * by the routing table, so they never count here. A human may send work back anywhere (the
 * human is the loop's exit).
 */
export function isCycle(hop: Hop, revisits: readonly Required<RevisitEdge>[]): boolean {
  const before = hop.chain.slice(0, -1);
  if (!before.includes(hop.to) || hop.from === HUMAN) return false;
  const edge = revisits.find((e) => e.from === hop.from && e.to === hop.to);
  if (!edge) return true;
  return edge.bound !== 'revisions' && timesTaken(hop.chain, edge) > edge.bound.max;
}

/** How often the chain goes straight from `edge.from` to `edge.to`. */
function timesTaken(chain: readonly string[], edge: RevisitEdge): number {
  let n = 0;
  for (let i = 1; i < chain.length; i++) if (chain[i - 1] === edge.from && chain[i] === edge.to) n++;
  return n;
}

/** Transfers past the cap. `allowance` is the cap counted from the last human decision
 * (a human who sends work on grants a fresh allowance; agents alone never do). */
export function exceedsHopCap(hop: Hop, maxHops: number, countAtLastHumanDecision = 0): boolean {
  return hop.count - countAtLastHumanDecision > maxHops;
}

/**
 * Key a stage records its result under: `job_id:stage:n`, n = deliveries the package has had
 * (its chain length; 0 before the first). The same package delivered twice to the same stage
 * gets the same key; a revision is a later delivery and gets a new one.
 */
export function deliveryKey(pkg: Pick<HandoffV1, 'job_id' | 'hop'>, stage: string): string {
  return `${pkg.job_id}:${stage}:${pkg.hop?.chain.length ?? 0}`;
}
