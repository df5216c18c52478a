/**
 * A long job's artifact list stays bounded: once a package lists more than `LIMITS.artifactsKept`
 * artifacts, the rail moves the superseded ones (every artifact but the job's entry and the newest
 * of each type) off it. They stay in the store under their own URIs and hashes, and the package's
 * `earlier_artifacts` names the snapshot of the delivery that still listed them; that snapshot's
 * own `earlier_artifacts` names the fold before it, so every artifact stays reachable. Nothing a
 * stage reads as its input (the newest of a type) ever leaves.
 *
 * Only the rail folds, and only between hops: a stage must echo the list it was delivered
 * (`artifacts_append_only`) and the reference (`earlier_artifacts_kept`).
 */
import { LIMITS, type HandoffV1, type StageCard } from '../../contracts/rail';

export interface FoldPoint {
  /** The stage whose hop just ended, and what its card says it is. */
  card: Pick<StageCard, 'role'> | undefined;
  /** The snapshot of the package as that hop delivered it, when the stage's worker stored it. */
  storedSnapshot: string | undefined;
}

/**
 * The package with its superseded artifacts moved off, or the package as is when it is short,
 * when there is no stored snapshot to point at, or after a critic: a writer acts only on the
 * package its critic passed, as the critic recorded it, so nothing may change between the two.
 */
export function foldArtifacts(pkg: HandoffV1, at: FoldPoint): HandoffV1 {
  if (pkg.artifacts.length <= LIMITS.artifactsKept || !at.storedSnapshot || at.card?.role === 'critic') return pkg;
  const [entry, ...rest] = pkg.artifacts;
  const newest = new Map(rest.map((a, i) => [a.type, i]));
  const kept = rest.filter((a, i) => newest.get(a.type) === i);
  const moved = rest.length - kept.length;
  if (!entry || moved === 0) return pkg;
  return {
    ...pkg,
    artifacts: [entry, ...kept],
    earlier_artifacts: { count: (pkg.earlier_artifacts?.count ?? 0) + moved, snapshot: at.storedSnapshot },
  };
}
