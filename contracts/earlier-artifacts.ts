/**
 * Superseded artifacts: every artifact on a package but the job's entry and the newest of each
 * type. Nothing a stage reads as its input (the newest of a type) is superseded, and the newest
 * artifact overall (what the next stage works on) stays last. Moving them off the package behind
 * `earlier_artifacts` (the snapshot of a delivery that still listed them) keeps the package from
 * growing with the job: a stage's worker does it to the package it emits, checked by the rail
 * (workflows/rail/invariants.ts), and the rail does it between hops for a stage that did not
 * (workflows/rail/earlier-artifacts.ts). Pure: workflow code and activities share it.
 */
import type { Artifact, HandoffV1 } from './handoff';
import { LIMITS } from './limits';
import { sha256Hex } from './sha256';

export interface ArtifactFold {
  /** The entry and the newest of each type, in their order. */
  kept: Artifact[];
  /** The superseded ones, in their order. */
  moved: Artifact[];
}

export function foldSuperseded(artifacts: readonly Artifact[]): ArtifactFold {
  const [entry, ...rest] = artifacts;
  if (!entry) return { kept: [], moved: [] };
  const newest = new Map(rest.map((a, i) => [a.type, i]));
  const kept: Artifact[] = [entry];
  const moved: Artifact[] = [];
  rest.forEach((a, i) => (newest.get(a.type) === i ? kept : moved).push(a));
  return { kept, moved };
}

/** The package with `fold` applied: its superseded artifacts counted and found at `snapshot`. */
export function withFold(pkg: HandoffV1, fold: ArtifactFold, snapshot: string): HandoffV1 {
  return {
    ...pkg,
    artifacts: fold.kept,
    earlier_artifacts: { count: (pkg.earlier_artifacts?.count ?? 0) + fold.moved.length, snapshot },
  };
}

/** How a job remembers an output's URI: as is, or past `LIMITS.shortText` characters as its
 * sha256, so the memory it carries across continue-as-new stays small whatever the URIs. */
export const outputKey = (uri: string): string =>
  uri.length <= LIMITS.shortText ? uri : `uri-sha256:${sha256Hex(uri)}`;

/** What a stage moved off the package it was delivered, folding the one it emitted, as a job
 * remembers it for `no_artifact_reuse`: the URI key and hash of each delivered artifact (but the
 * entry) it no longer lists; none when it did not fold. */
export function movedByStage(delivered: HandoffV1, emitted: HandoffV1): string[] {
  if (emitted.earlier_artifacts?.snapshot === delivered.earlier_artifacts?.snapshot) return [];
  const kept = new Set(emitted.artifacts.map((a) => a.uri));
  return delivered.artifacts
    .slice(1)
    .filter((a) => !kept.has(a.uri))
    .flatMap((a) => (a.hash ? [outputKey(a.uri), a.hash] : [outputKey(a.uri)]));
}
