/**
 * What every stage activity shares: check the delivery, do the work at most once per delivery
 * key, and build the emitted package without touching what the rail owns. A pipeline author
 * writes only the work (`(pkg) => StageOutput`); `stageActivities` wraps each stage's.
 */
import { roleMismatch, validateHandoff, type Artifact, type Evaluator, type HandoffV1, type Pipeline, type StageNameOf, type ToolTried } from '../contracts';
import type { StageCard, StageResult, StageWork } from '../contracts/stages';
import type { Store } from '../src/store';
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
 * It heartbeats throughout, so such a crash is noticed within the card's heartbeat timeout.
 */
export async function runStageOnce(
  store: Store,
  pipeline: Pick<Pipeline, 'versions'>,
  card: StageCard,
  delivery: StageWork,
  work: (pkg: HandoffV1) => Promise<StageOutput>,
): Promise<StageResult> {
  const pkg = checkDelivery(pipeline, card, delivery);
  return whileHeartbeating(async () => {
    const prior = await store.findStageCompletion(delivery.delivery_key);
    if (prior) return prior;
    const output = await work(pkg);
    return store.recordStageCompletion(delivery.delivery_key, {
      package: emit(pkg, output),
      artifact: output.artifact,
      cost_usd: output.cost_usd,
      body: output.body,
    });
  });
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
