/**
 * Rail invariants, checked on every package a stage emits.
 * A violation fails closed: the hop is rejected with the invariant named and the job escalates.
 */
import {
  foldSuperseded,
  isStoredEntryOf,
  outputKey,
  parseReference,
  segmentCount,
  splitSummary,
  type Artifact,
  type HandoffV1,
  type Hop,
  type StageCard,
} from '../../contracts/rail';
import { sameJson } from '../../contracts/canonical-json';
import { constraintBreaches, policiesFor } from '../../contracts/constraints';

export interface Violation {
  invariant: string;
  reason: string;
}

export interface EmittedOutput {
  /** The package the rail delivered to the stage (hop and ack already set). */
  delivered: HandoffV1;
  /** The package the stage emitted (already schema-valid). */
  emitted: HandoffV1;
  /** The stage's output artifact ref. */
  artifact: Artifact;
  /** The output artifact body the stage reported, used for constraint checks. */
  body?: unknown;
  /** What the stage reported spending. */
  costUsd: number;
  card: StageCard;
  /** The snapshot a stage may fold the artifacts it emits behind (`earlier_artifacts`): the
   * delivery's own, or a recorded answer's; none, and a fold is a change like any other. */
  foldSnapshot?: string;
  /** URIs and hashes of the outputs stages moved off this job's package: no revision repeats them either. */
  earlierOutputs?: ReadonlySet<string>;
}

/** Key-order-independent equality: a stage in another language may re-serialise objects. */
const same = sameJson;

/**
 * The stage echoed the hop block it was delivered. A missing `handoff_reason` counts as an echo:
 * recorded results from before typed reasons carry hop blocks without it, and the rail puts its
 * own hop block back on the emitted package anyway (settleHop), so nothing a stage drops is lost.
 * Any other difference, a different reason included, is a change.
 */
function sameHop(after: Hop | undefined, before: Hop | undefined): boolean {
  if (after?.handoff_reason !== undefined || before?.handoff_reason === undefined) return same(after, before);
  const { handoff_reason: _reason, ...rest } = before;
  return same(after, rest);
}

/**
 * Why the emitted summary is not the delivered one with segments appended, or undefined
 * (segments are appended, never re-summarised, nothing is cut). Either it starts with the
 * delivered summary, or — after the stage moved the oldest segments to the store — with one
 * reference segment, followed by the delivered summary's newest segments unchanged, where the
 * reference stands for at least the segments no longer on the package. The rail cannot read the
 * store, so that is a check of the format and the count only.
 *
 * A plain prefix is enough on purpose: recorded results from before segments echo the summary
 * they were delivered, which on replay is the rail's old summary (the previous result's plus a
 * rail line) and so starts with the previous result's summary the rail delivers now.
 */
export function summaryNotAppended(delivered: string | undefined, emitted: string | undefined): string | undefined {
  const was = delivered ?? '';
  const now = emitted ?? '';
  if (now.startsWith(was)) return undefined;
  const before = splitSummary(was);
  const [first, ...rest] = splitSummary(now);
  const ref = first === undefined ? undefined : parseReference(first);
  if (!ref)
    return `the summary no longer starts with the ${before.length} segment(s) delivered: earlier segments were rewritten or cut`;
  for (let moved = 0; moved <= before.length; moved++) {
    const kept = before.slice(moved);
    if (same(rest.slice(0, kept.length), kept) && ref.segments >= segmentCount(before.slice(0, moved)))
      return undefined;
  }
  return `the summary starts with a reference to ${ref.segments} segment(s) at ${ref.uri}, but what follows is not the delivered summary's newest segments, or the reference stands for fewer than were moved`;
}

/**
 * The prose a stage authored, which content policies read: a markdown body (or a plain string).
 * Structured outputs (extracted fields, retrieved passages, verdicts) quote the job's entry, the
 * sources searched or the work under judgement; holding quotes to a content policy would reject
 * a job for what its requester wrote.
 */
export function outputText(body: unknown): string {
  if (typeof body === 'string') return body;
  if (body && typeof body === 'object' && typeof (body as { markdown?: unknown }).markdown === 'string') {
    return (body as { markdown: string }).markdown;
  }
  return '';
}

/** Records one broken invariant with its reason. */
type Report = (invariant: string, reason: string) => void;

/** Every invariant the emitted package breaks, in a fixed order; empty means the hop stands. */
export function checkEmitted(o: EmittedOutput): Violation[] {
  const v: Violation[] = [];
  const add: Report = (invariant, reason) => v.push({ invariant, reason });
  const checked = unfolded(o);
  checkRailOwned(checked, add);
  checkEvaluator(checked, add);
  const earlier = checkAppendOnly(checked, add);
  checkOutput(checked, earlier, add);
  checkPolicies(checked, add);
  return v;
}

/**
 * The emitted package as it was before its stage folded it, when the stage folded exactly as the
 * contract says (contracts/earlier-artifacts.ts): the list it was delivered (the entry moved to the
 * store, if it did) with its output appended, less the superseded ones, counted on
 * `earlier_artifacts`, behind `foldSnapshot`. Anything else is checked as emitted, so a list cut
 * any other way breaks `artifacts_append_only` and a reference changed any other way
 * `earlier_artifacts_kept`.
 */
function unfolded(o: EmittedOutput): EmittedOutput {
  const { delivered: before, emitted: after } = o;
  const fold = after.earlier_artifacts;
  if (!fold || !o.foldSnapshot || fold.snapshot !== o.foldSnapshot || same(fold, before.earlier_artifacts)) return o;
  const entry = isStoredEntryOf(before.job_id, before.artifacts[0], after.artifacts[0])
    ? after.artifacts[0]!
    : before.artifacts[0];
  if (!entry) return o;
  const appended = [entry, ...before.artifacts.slice(1), o.artifact];
  const expected = foldSuperseded(appended);
  if (
    expected.moved.length === 0 ||
    fold.count !== (before.earlier_artifacts?.count ?? 0) + expected.moved.length ||
    !same(after.artifacts, expected.kept)
  )
    return o;
  return { ...o, emitted: { ...after, artifacts: appended, earlier_artifacts: before.earlier_artifacts } };
}

/** What the job request and the rail set, which no stage may change: ids, goal, trace,
 * constraints, a wallet that only shrinks, a reported cost, the hop block and the ack. */
function checkRailOwned(o: EmittedOutput, add: Report): void {
  const { delivered: before, emitted: after, card } = o;
  if (after.job_id !== before.job_id)
    add('job_id_unchanged', `job_id changed from ${before.job_id} to ${after.job_id}`);
  if (after.goal !== before.goal) add('goal_unchanged', "the goal is the job request's; the stage rewrote it");
  if (after.trace.traceparent !== before.trace.traceparent)
    add('trace_unchanged', 'traceparent changed across the hop');
  if (!same(after.constraints, before.constraints)) add('constraints_kept', 'constraints were dropped or changed');
  if (
    after.budget.usd_remaining > before.budget.usd_remaining ||
    after.budget.revisions_remaining > before.budget.revisions_remaining
  ) {
    add('budget_not_increased', 'the wallet grew without a human top-up');
  }
  if (typeof o.costUsd !== 'number' || !Number.isFinite(o.costUsd) || o.costUsd < 0) {
    add('cost_reported', `"${card.name}" reported cost ${String(o.costUsd)}; a stage must report a finite amount >= 0`);
  }
  if (!sameHop(after.hop, before.hop) || !same(after.ack, before.ack))
    add('hop_owned_by_rail', 'the stage changed the hop block or the ack');
}

/** Only a critic moves the evaluator, and a critic always leaves a verdict. */
function checkEvaluator(o: EmittedOutput, add: Report): void {
  const { delivered: before, emitted: after, card } = o;
  const evaluatorChanged = !same(after.evaluator, before.evaluator);
  if (card.role !== 'critic' && evaluatorChanged) {
    add(
      'evaluator_not_reset',
      `"${card.name}" is not a critic and changed the evaluator state (last verdict ${before.evaluator.last_verdict} → ${after.evaluator.last_verdict})`,
    );
  } else if (card.role === 'critic' && after.evaluator.last_verdict === 'none') {
    add('evaluator_not_reset', `the critic "${card.name}" left no verdict`);
  }
}

/** Tools tried, the summary and the artifacts only grow; returns the artifacts that were on the
 * package before this hop (the inline entry as the stage moved it to the store, if it did). */
function checkAppendOnly(o: EmittedOutput, add: Report): HandoffV1['artifacts'] {
  const { delivered: before, emitted: after } = o;
  if (!same(after.tools_tried.slice(0, before.tools_tried.length), before.tools_tried)) {
    add('tools_tried_append_only', 'burned tool calls were removed from tools_tried');
  }
  const summary = summaryNotAppended(before.summary, after.summary);
  if (summary) add('summary_append_only', summary);
  const kept = after.artifacts.slice(0, before.artifacts.length);
  // The one rewrite allowed: the inline entry moved to the store, under this job, hash for hash.
  const entryMoved = isStoredEntryOf(before.job_id, before.artifacts[0], kept[0]);
  if (!same(entryMoved ? kept.slice(1) : kept, entryMoved ? before.artifacts.slice(1) : before.artifacts))
    add('artifacts_append_only', 'earlier artifacts were removed or rewritten');
  // A stage's own fold was taken back already (unfolded); what is left is a change.
  if (!same(after.earlier_artifacts, before.earlier_artifacts))
    add(
      'earlier_artifacts_kept',
      'the reference to the artifacts the rail moved off the package was changed or dropped',
    );
  return entryMoved ? [kept[0]!, ...before.artifacts.slice(1)] : before.artifacts;
}

/** The stage appended exactly its reported output, of a type its card declares, and new. */
function checkOutput(o: EmittedOutput, earlier: HandoffV1['artifacts'], add: Report): void {
  const { delivered: before, emitted: after, card } = o;
  const added = after.artifacts.slice(before.artifacts.length);
  if (!card.outputs.includes(o.artifact.type))
    add('output_declared', `"${card.name}" emitted ${o.artifact.type}; its card declares ${card.outputs.join(' | ')}`);
  if (added.length !== 1 || !same(added[0], o.artifact))
    add('output_declared', 'the emitted package must append exactly the reported output artifact');
  const reused = earlier.find((a) => a.uri === o.artifact.uri || (a.hash !== undefined && a.hash === o.artifact.hash));
  if (reused)
    add(
      'no_artifact_reuse',
      `the output repeats an earlier ${reused.type} (${reused.uri}); a revision must differ from every rejected output`,
    );
  else if (
    o.earlierOutputs &&
    o.earlierOutputs.size > 0 &&
    (o.earlierOutputs.has(outputKey(o.artifact.uri)) || (o.artifact.hash && o.earlierOutputs.has(o.artifact.hash)))
  )
    add(
      'no_artifact_reuse',
      `the output repeats an earlier artifact moved off the package (${o.artifact.uri}); a revision must differ from every rejected output`,
    );
}

/** The job's constraints as content policies, on the prose and tool calls this stage added. The
 * critic quotes what it judges, so only producers' text is held to them. */
function checkPolicies(o: EmittedOutput, add: Report): void {
  const { delivered: before, emitted: after, card } = o;
  const toolsUsed = after.tools_tried.slice(before.tools_tried.length).map((t) => t.name);
  const text = card.role === 'critic' ? '' : outputText(o.body);
  if (card.role !== 'critic' && o.body === undefined && policiesFor(before.constraints).length > 0) {
    add('constraints_enforced', `"${card.name}" reported no output body, so the job's constraints cannot be checked`);
  }
  for (const b of constraintBreaches(before.constraints, { text, toolsUsed }))
    add('constraints_enforced', `${b.policy}: ${b.breach}`);
}
