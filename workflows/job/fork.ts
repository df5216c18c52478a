/**
 * A fork's start: a job that begins from the package another job's rail recorded at one of its
 * hops (`request.fork`), or from an operator's edit of it, instead of from its entry alone.
 *
 * The request's fork is checked like any input, before anything runs: the parent's package must
 * be the snapshot its address names, of that hop, with this request's entry. That the address is
 * the parent's — an ack of the parent's rail at that hop names it — needs the parent's records, so
 * the rail's activity that re-records the evidence checks it first (`fork_snapshot_recorded`,
 * nothing recorded when it fails). An edit is checked
 * against it before the fork's first hop, and refused with an ack naming what it broke — above
 * all, an edit whose content changed but which keeps the parent's pass: that pass covers the
 * parent's package, never the edit. An accepted start has the rail re-record the parent's
 * evidence (and the edit's own artifacts) under the fork, so the fork's writer finds every
 * artifact recorded for the fork, and a pass only where a critic judged exactly this content.
 */
import { ApplicationFailure } from '@temporalio/workflow';
import {
  HANDOFF_V1,
  HUMAN,
  LIMITS,
  sameJson,
  forkContent,
  forkedPackage,
  inlineText,
  parseEntryUri,
  parseSnapshotUri,
  requestEntry,
  snapshotContent,
  snapshotOf,
  validateHandoff,
  type HandoffV1,
  type JobRequest,
  type Pipeline,
} from '../../contracts/rail';
import { sha256Hex } from '../../contracts/sha256';
import { recordForkEvidence } from '../activities';
import { ackRecord, type AckDecision } from '../rail/ack';
import { deliveryKey } from '../rail/hop-chain';
import { route, type RecordedBodies, type Route } from '../rail/routing';
import type { JobState } from './state';

/** Who the ack of a fork's first hop names as having sent it on. */
export const FORK_ACTOR = 'operator';

/** A fork's start as the request gives it, checked. */
export interface ForkStart {
  of: string;
  hop: number;
  snapshot: string;
  /** The parent's package at that hop, in the fork's name. */
  parent: HandoffV1;
  /** The operator's edit, as it arrived (checked when the fork begins, and acked). */
  edit: unknown;
}

/** The request's fork, checked like the rest of the request (a problem fails the job at once,
 * non-retryable); undefined for any other job. */
export function acceptFork(
  request: JobRequest,
  pipeline: Pick<Pipeline, 'entry' | 'entrySpec' | 'versions'>,
  jobId: string,
  traceparent: string,
): ForkStart | undefined {
  const fork = request.fork;
  if (!fork) return undefined;
  const refuse = (why: string) =>
    ApplicationFailure.nonRetryable(`invalid fork of ${fork.of} at hop ${fork.hop}: ${why}`, 'InvalidJobRequest');
  if (fork.of === jobId) throw refuse('a job cannot be its own fork');
  const address = parseSnapshotUri(fork.snapshot);
  if (address?.jobId !== fork.of) throw refuse(`${fork.snapshot.slice(0, 120)} is not a snapshot of job ${fork.of}`);
  if (sha256Hex(snapshotContent(fork.parent)) !== address.sha)
    throw refuse('the parent package is not the snapshot its address names');
  const checked = validateHandoff(fork.parent, { accept: [HANDOFF_V1], registry: pipeline.versions });
  if (!checked.ok) throw refuse(`the parent package is not a valid ${HANDOFF_V1}`);
  const parent = checked.value;
  if (parent.job_id !== fork.of || parent.hop?.count !== fork.hop)
    throw refuse(`the snapshot is job ${parent.job_id}'s at hop ${parent.hop?.count ?? 'none'}`);
  const entry = parent.artifacts[0];
  if (entry?.type !== pipeline.entry) throw refuse(`its first artifact is not a ${pipeline.entry}`);
  if (!sameEntry(entry.uri, requestEntry(request, pipeline.entrySpec)))
    throw refuse("the request's entry is not the parent's");
  return {
    of: fork.of,
    hop: fork.hop,
    snapshot: fork.snapshot,
    parent: forkedPackage(parent, { job_id: jobId, traceparent }),
    edit: fork.package,
  };
}

/** Whether `body` is the entry at `uri`: the bytes the parent's request carried inline, or stored
 * under their hash. */
function sameEntry(uri: string, body: unknown): boolean {
  const text = JSON.stringify(body);
  const stored = parseEntryUri(uri);
  if (stored) return text !== undefined && sha256Hex(text) === stored.sha;
  const inline = inlineText({ uri });
  return inline !== undefined && text !== undefined && inline === text;
}

/** An edit the fork refuses before its first hop, or the package it starts from. */
export type ForkCheck = { refused: AckDecision } | { package: HandoffV1; edited: boolean };

/** What the fork starts from: the parent's package, or the edit when it keeps what the rail and
 * the request own and claims no verdict over content the verdict did not judge. */
export function checkFork(start: ForkStart, pipeline: Pick<Pipeline, 'versions' | 'cards'>, jobId: string): ForkCheck {
  if (start.edit === undefined) return { package: start.parent, edited: false };
  const checked = validateHandoff(start.edit, { accept: [HANDOFF_V1], registry: pipeline.versions });
  if (!checked.ok) {
    const shown = checked.errors.slice(0, 3).map((e) => `${e.path || '/'} ${e.message}`);
    return {
      refused: {
        ack: 'rejected_schema',
        reason: `the edited package is not a valid ${HANDOFF_V1}: ${shown.join('; ')}`,
        errors: checked.errors,
      },
    };
  }
  const edit = checked.value;
  if (edit.job_id !== start.of && edit.job_id !== jobId)
    return invariant('job_id_unchanged', `the edited package is job ${edit.job_id}'s, not ${start.of}'s`);
  const pkg = forkedPackage(edit, { job_id: jobId, traceparent: start.parent.trace.traceparent });
  const broken = brokenByEdit(start.parent, pkg, pipeline);
  if (broken) return invariant(broken.invariant, broken.reason);
  return { package: pkg, edited: !sameJson(pkg, start.parent) };
}

const invariantDecision = (name: string, reason: string): AckDecision => ({
  ack: 'rejected_invariant',
  invariant: name,
  reason: reason.slice(0, LIMITS.shortText),
});
const invariant = (name: string, reason: string): ForkCheck => ({ refused: invariantDecision(name, reason) });

/** The first rule an edit breaks, if any: what the request and the rail own stays, the wallet
 * does not grow, new artifacts are of types the pipeline's stages make, a verdict is only ever
 * reset, and a pass never covers changed content. */
function brokenByEdit(
  parent: HandoffV1,
  pkg: HandoffV1,
  pipeline: Pick<Pipeline, 'cards'>,
): { invariant: string; reason: string } | undefined {
  const same = sameJson;
  if (pkg.goal !== parent.goal) return { invariant: 'goal_unchanged', reason: "an edit may not change the job's goal" };
  if (!same(pkg.constraints, parent.constraints))
    return { invariant: 'constraints_kept', reason: "an edit may not change the job's constraints" };
  if (!same(pkg.hop, parent.hop)) return { invariant: 'hop_owned_by_rail', reason: 'an edit may not change the hop' };
  if (
    pkg.budget.usd_remaining > parent.budget.usd_remaining ||
    pkg.budget.revisions_remaining > parent.budget.revisions_remaining
  )
    return { invariant: 'budget_not_increased', reason: 'the fork runs on the wallet its parent had at that hop' };
  if (!same(pkg.artifacts[0], parent.artifacts[0]))
    return { invariant: 'fork_entry_kept', reason: "an edit may not change the job's entry" };
  const made = new Set(pipeline.cards.flatMap((c) => c.outputs));
  const known = new Set(parent.artifacts.map((a) => a.uri));
  const foreign = pkg.artifacts.slice(1).find((a) => !known.has(a.uri) && !made.has(a.type));
  if (foreign)
    return { invariant: 'output_declared', reason: `no stage of the pipeline makes ${foreign.type}, the edit's` };
  if (!same(pkg.evaluator, parent.evaluator) && pkg.evaluator.last_verdict !== 'none')
    return { invariant: 'evaluator_not_reset', reason: 'an edit may reset the verdict, never set one' };
  if (pkg.evaluator.last_verdict === 'pass' && forkContent(pkg) !== forkContent(parent))
    return {
      invariant: 'fork_edit_rejudged',
      reason: `the edited package keeps the parent's pass, which covers the parent's content, not the edit: reset the verdict so the critic judges the edit`,
    };
  return undefined;
}

/** The fork's first step: the parent's hop again, to the stage it went to, when nothing was edited;
 * else wherever the pipeline's table sends the edit. Sent on as by a human (a fresh hop allowance,
 * and no revisit counted against the stage the parent's hop went to). */
export function forkStep(
  start: Pick<ForkStart, 'of' | 'hop'>,
  pkg: HandoffV1,
  edited: boolean,
  pipeline: Pick<Pipeline, 'routes' | 'get'>,
  bodies: RecordedBodies,
): Route {
  const reason = `fork of ${start.of} from hop ${start.hop}${edited ? ', edited' : ''}`;
  const to = pkg.hop?.to;
  const next: Route =
    !edited && to !== undefined && pipeline.get(to) !== undefined
      ? { kind: 'hop', to, reason, package: pkg }
      : route(pipeline, pkg, bodies);
  return next.kind === 'hop' || next.kind === 'fanout' ? { ...next, from: HUMAN, actor: FORK_ACTOR } : next;
}

/** Begins a fork: refused (the ack recorded, the reason returned), or the parent's evidence
 * re-recorded under the fork and the first step to take. */
export async function beginFork(job: JobState, start: ForkStart): Promise<Route | { kind: 'refused'; reason: string }> {
  const checked = checkFork(start, job.pipeline, job.jobId);
  if ('refused' in checked) {
    refuseFork(job, start, checked.refused);
    return { kind: 'refused', reason: checked.refused.reason };
  }
  // The activity's input names the snapshot, so the rail's own worker checks that the parent's
  // acks hold it before recording anything (the workflow cannot read another job). No new command:
  // the same activity, with more input, so recorded forks replay as they ran (docs/replay.md).
  const recorded = await recordForkEvidence({
    of: start.of,
    package: checked.package,
    snapshot: start.snapshot,
    hop: start.hop,
  });
  if ('refused' in recorded) {
    const decision = invariantDecision(recorded.invariant ?? 'fork_edit_readable', recorded.refused);
    refuseFork(job, start, decision);
    return { kind: 'refused', reason: decision.reason };
  }
  Object.assign(job.bodies, recorded.bodies);
  job.package = checked.package;
  job.countAtLastHumanDecision = checked.package.hop?.count ?? 0;
  return forkStep(start, checked.package, checked.edited, job.pipeline, job.bodies);
}

/** The refusal as the fork's one ack, at the parent's hop, with the edit as it arrived (or, with
 * none, the package the request named) kept as that hop's snapshot (no stage stored it). */
function refuseFork(job: JobState, start: ForkStart, decision: AckDecision): void {
  const hop = start.parent.hop!;
  const snapshot = snapshotOf(job.jobId, start.edit ?? start.parent);
  job.keepSnapshot(snapshot);
  job.acks.push({
    ...ackRecord(decision, {
      stage: hop.to,
      hop,
      deliveryKey: deliveryKey(start.parent, hop.to),
      traceparent: start.parent.trace.traceparent,
      now: new Date(),
      actor: FORK_ACTOR,
    }),
    snapshot: snapshot.uri,
  });
}
