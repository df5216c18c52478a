/**
 * A long job's artifact list stays bounded: once a package lists more than `LIMITS.artifactsKept`
 * artifacts, the rail moves the superseded ones (every artifact but the job's entry and the newest
 * of each type) off it. They stay in the store under their own URIs and hashes, and the package's
 * `earlier_artifacts` names the snapshot of the delivery that still listed them; that snapshot's
 * own `earlier_artifacts` names the fold before it, so every artifact stays reachable. Nothing a
 * stage reads as its input (the newest of a type) ever leaves.
 *
 * A handrail stage's worker folds the package it emits (contracts/earlier-artifacts.ts), so this
 * fold is for stages that do not: between hops, past `LIMITS.artifactsKept`. A stage either echoes
 * the list it was delivered (`artifacts_append_only`) and the reference (`earlier_artifacts_kept`),
 * or folds exactly as the contract says (invariants.ts).
 */
import { LIMITS, foldSuperseded, withFold, type HandoffV1, type StageCard } from '../../contracts/rail';

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
  const fold = foldSuperseded(pkg.artifacts);
  return fold.moved.length === 0 ? pkg : withFold(pkg, fold, at.storedSnapshot);
}
