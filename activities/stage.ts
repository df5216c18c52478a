/**
 * What every stage activity shares: check the delivery, do the work at most once per delivery
 * key, and build the emitted package without touching what the rail owns. A pipeline author
 * writes only the work (`(pkg) => StageOutput`); `stageActivities` wraps each stage's.
 */
import { canonicalJson, roleMismatch, validateHandoff, type Artifact, type Evaluator, type HandoffV1, type Pipeline, type StageNameOf, type ToolTried } from '../contracts';
import { constraintBreaches } from '../contracts/constraints';
import type { StageCard, StageResult, StageWork } from '../contracts/stages';
import { sha256Hex } from '../src/worker/store/content';
import type { DeliveryFacts, StageRecord, Store } from '../src/worker/store';
import type { ApplicationFailure } from '@temporalio/common';
import { stageFailure } from './failures';
import { whileHeartbeating } from './heartbeat';

export interface StageOutput {
  artifact: Artifact;
  body: unknown;
  cost_usd: number;
  tools_tried?: ToolTried[];
  open_questions?: string[];
  memory_refs?: string[];
  /** Only the judge sets this. */
  evaluator?: Evaluator;
}

/**
 * Runs `work` for a delivery unless a result is already recorded under its key; records the
 * result (first one wins) and returns the recorded one. A retry after a crash between the work
 * and the report therefore returns what the first attempt recorded, or redoes idempotent work.
 * A result recorded by another delivery (concurrent, or repeated later) comes back marked, so
 * the rail acks it `duplicate` — or `rejected_conflict` when that delivery carried another
 * package. A writer first checks the package's provenance. It heartbeats throughout, so a crash
 * is noticed within the card's heartbeat timeout.
 */
export async function runStageOnce(
  store: Store,
  pipeline: Pick<Pipeline, 'versions' | 'entry' | 'get'>,
  card: StageCard,
  delivery: StageWork,
  work: (pkg: HandoffV1) => Promise<StageOutput>,
): Promise<StageResult> {
  const pkg = checkDelivery(pipeline, card, delivery);
  const facts = deliveryFacts(pkg, card.name);
  return whileHeartbeating(async () => {
    const prior = await store.findStageRecord(delivery.delivery_key);
    if (prior) return asAnswered(prior, facts);
    if (card.writes !== null) await checkProvenance(store, pipeline, pkg);
    const output = await work(pkg);
    const recorded = await store.recordStageCompletion(
      delivery.delivery_key,
      { package: emit(pkg, output), artifact: output.artifact, cost_usd: output.cost_usd, body: output.body },
      facts,
    );
    return asAnswered(recorded, facts);
  });
}

/** What identifies a delivery: the package as delivered, and the package less the rail's hop
 * and ack (what a repeated delivery of one package shares). */
export function deliveryFacts(pkg: HandoffV1, stage: string): DeliveryFacts {
  const { hop: _hop, ack: _ack, ...content } = pkg;
  return { job_id: pkg.job_id, stage, delivery_sha: sha256Hex(canonicalJson(pkg)), package_sha: sha256Hex(canonicalJson(content)) };
}

/** A record this delivery made (or a pre-provenance one) as is; another delivery's, marked. */
export function asAnswered(record: StageRecord, facts: Pick<DeliveryFacts, 'delivery_sha' | 'package_sha'>): StageResult {
  if (record.delivery_sha === null || record.delivery_sha === facts.delivery_sha) return record.result;
  return { ...record.result, recorded_by_other: record.package_sha === facts.package_sha ? 'same' : 'different' };
}

/**
 * Provenance: a writer acts only on evidence the rail recorded for this job. Every artifact but
 * the job's entry must have been recorded by a stage of this pipeline for this job id (the same
 * bytes recorded for another job do not count), and the newest — what the writer takes — by a
 * critic whose recorded verdict is `pass` over exactly these artifacts.
 */
export async function checkProvenance(store: Store, pipeline: Pick<Pipeline, 'entry' | 'get'>, pkg: HandoffV1): Promise<void> {
  const [entry, ...evidence] = pkg.artifacts;
  if (!entry || entry.type !== pipeline.entry) throw stageFailure('ArtifactInvalid', `the first artifact must be the job's ${pipeline.entry}, not ${entry?.type ?? 'nothing'}`);
  let last: { stage: string; result: StageResult } | undefined;
  for (const artifact of evidence) {
    const recorded = await store.findRecordedArtifact(pkg.job_id, artifact.uri);
    if (!recorded || recorded.result.artifact.type !== artifact.type || !pipeline.get(recorded.stage)) {
      throw stageFailure('ArtifactInvalid', `${artifact.type} ${artifact.uri.slice(0, 80)} was not recorded for job ${pkg.job_id} by a stage of this pipeline`);
    }
    last = recorded;
  }
  const judged = last && pipeline.get(last.stage)?.role === 'critic' && last.result.package.evaluator.last_verdict === 'pass';
  if (!judged || canonicalJson(last!.result.package.artifacts) !== canonicalJson(pkg.artifacts)) {
    throw stageFailure('VerdictNotPassing', `no passing verdict recorded for job ${pkg.job_id} over these artifacts`);
  }
}

/** Constraint policies hold on what a writer actually writes, whatever the verdict said. */
export function refuseBreaches(constraints: readonly string[], written: string, stage: string): void {
  const breaches = constraintBreaches(constraints, { text: written, toolsUsed: [] });
  if (breaches.length > 0) throw stageFailure('VerdictNotPassing', `${stage} refuses to write: ${breaches.map((b) => `${b.policy}: ${b.breach}`).join('; ')}`);
}

/** The second line behind the rail's ack: a stage never works on a delivery meant for another
 * stage, a malformed package, or a package whose newest artifact it does not take. */
function checkDelivery(pipeline: Pick<Pipeline, 'versions'>, card: StageCard, delivery: StageWork): HandoffV1 {
  if (delivery.stage !== card.name) {
    throw stageFailure('StageInputInvalid', `delivery for stage "${String(delivery.stage)}" reached "${card.name}"`);
  }
  if (typeof delivery.delivery_key !== 'string' || delivery.delivery_key.length === 0 || delivery.delivery_key.length > 500) {
    throw stageFailure('StageInputInvalid', `${card.name}: delivery_key must be a non-empty string of at most 500 characters`);
  }
  // The rail's own validator (ajv, the versions this stage reads): a stage never reads a package
  // the rail would have refused. No upgrade here: the rail delivers what the stage reads.
  const checked = validateHandoff(delivery.package, { accept: card.packageVersions, registry: pipeline.versions });
  if (!checked.ok || checked.value !== delivery.package) {
    const issues = checked.ok ? [`/schema ${String((delivery.package as { schema?: unknown }).schema)} is not read by ${card.name}`] : checked.errors.slice(0, 5).map((e) => `${e.path || '/'} ${e.message}`);
    throw stageFailure('StageInputInvalid', `${card.name}: package is not a valid ${card.packageVersions.join(' | ')} (${issues.join('; ')})`, { issues });
  }
  const role = roleMismatch(card, checked.value);
  if (role) throw stageFailure('StageInputInvalid', role);
  // The rail compares what we emit with what it delivered, so pass on the caller's object
  // (unknown fields byte-for-byte).
  return delivery.package as HandoffV1;
}

/** A stage's work: what it does with the package it was delivered. */
export type StageWorkFn = (pkg: HandoffV1) => Promise<StageOutput>;
/** A stage activity as the worker registers it, named after its card. */
export type StageActivity = (work: StageWork) => Promise<StageResult>;

/**
 * Activities for some of a pipeline's stages, named after their cards (a misnamed stage is a
 * compile error; the worker's `ActivitiesFor` catches a missing one), each run at most once per
 * delivery key.
 */
export function stageActivities<P extends Pipeline, K extends StageNameOf<P>>(
  pipeline: P,
  store: Store,
  work: { readonly [S in K]: StageWorkFn },
): { [S in K]: StageActivity } {
  const activities = {} as Record<string, StageActivity>;
  for (const [name, run] of Object.entries(work) as [string, StageWorkFn][]) {
    const card = pipeline.get(name);
    if (!card) throw new Error(`pipeline "${pipeline.name}" has no stage "${name}"`);
    activities[name] = (delivery: StageWork) => runStageOnce(store, pipeline, card, delivery, run);
  }
  return activities as { [S in K]: StageActivity };
}

/** A ticket lacking what the job cannot invent: the gaps become open questions on the package the
 * rail escalates with, never a guess. */
export function ticketFieldsMissing(stage: string, pkg: HandoffV1, gaps: string[]): ApplicationFailure {
  return stageFailure('TicketFieldsMissing', `${stage} refuses to guess: ${gaps.join('; ')}`, {
    open_questions: gaps,
    package: { ...pkg, open_questions: appendUnique(pkg.open_questions, gaps) },
  });
}

export function appendUnique<T>(list: readonly T[], extra: readonly T[] | undefined): T[] {
  return [...list, ...(extra ?? []).filter((item) => !list.includes(item))];
}

/** Input package + output artifact (+ questions, tools, memory refs, judge's evaluator). */
function emit(pkg: HandoffV1, output: StageOutput): HandoffV1 {
  return {
    ...pkg,
    artifacts: [...pkg.artifacts, output.artifact],
    open_questions: appendUnique(pkg.open_questions, output.open_questions),
    tools_tried: [...pkg.tools_tried, ...(output.tools_tried ?? [])],
    memory_refs: appendUnique(pkg.memory_refs, output.memory_refs),
    evaluator: output.evaluator ?? pkg.evaluator,
  };
}
