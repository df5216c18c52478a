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
  LIMITS,
  newestArtifact,
  type EarlierChain,
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
    ...keptChain([...(current?.chain ?? [ORIGIN]), to], current?.earlier),
    ...(handoff ? { handoff_reason: handoff } : {}),
  };
}

/**
 * A chain as a package carries it: its newest `LIMITS.chain` entries, and in `earlier` what the
 * older ones held that cycle detection and revisit bounds read (the stages they name, how often
 * each pair of stages followed one another, how many there were). Entries leave the chain only
 * through here, so the whole chain's facts hold however long the job runs.
 */
export function keptChain(
  chain: readonly string[],
  earlier: EarlierChain | undefined,
  keep: number = LIMITS.chain,
): Pick<Hop, 'chain' | 'earlier'> {
  if (chain.length <= keep) return { chain: [...chain], ...(earlier ? { earlier } : {}) };
  const cut = chain.length - keep;
  const stages = [...(earlier?.stages ?? [])];
  const edges = (earlier?.edges ?? []).map((e) => ({ ...e }));
  for (let i = 0; i < cut; i++) {
    const [from, to] = [chain[i]!, chain[i + 1]!];
    if (!stages.includes(from)) stages.push(from);
    const edge = edges.find((e) => e.from === from && e.to === to);
    if (edge) edge.times++;
    else edges.push({ from, to, times: 1 });
  }
  return { chain: chain.slice(cut), earlier: { entries: (earlier?.entries ?? 0) + cut, stages, edges } };
}

/** Every delivery the chain records, the entries that left it included. */
export const chainLength = (hop: Pick<Hop, 'chain' | 'earlier'>): number =>
  (hop.earlier?.entries ?? 0) + hop.chain.length;

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
  const visited = hop.chain.slice(0, -1).includes(hop.to) || (hop.earlier?.stages.includes(hop.to) ?? false);
  if (!visited || hop.from === HUMAN) return false;
  const edge = revisits.find((e) => e.from === hop.from && e.to === hop.to);
  if (!edge) return true;
  return edge.bound !== 'revisions' && timesTaken(hop, edge) > edge.bound.max;
}

/** How often the whole chain goes straight from `edge.from` to `edge.to`. */
function timesTaken({ chain, earlier }: Pick<Hop, 'chain' | 'earlier'>, edge: RevisitEdge): number {
  let n = earlier?.edges.find((e) => e.from === edge.from && e.to === edge.to)?.times ?? 0;
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
 * (its whole chain's length, entries that left it included; 0 before the first). The same package
 * delivered twice to the same stage gets the same key; a revision is a later delivery and gets a new one.
 */
export function deliveryKey(pkg: Pick<HandoffV1, 'job_id' | 'hop'>, stage: string): string {
  return `${pkg.job_id}:${stage}:${pkg.hop ? chainLength(pkg.hop) : 0}`;
}
