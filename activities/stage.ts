/**
 * What every stage activity shares: check the delivery, do the work at most once per delivery
 * key, and build the emitted package without touching what the rail owns. A pipeline author
 * writes only the work (`(pkg) => StageOutput`); `stageActivities` wraps each stage's.
 */
import {
  canonicalJson,
  FORK_EDIT_STAGE,
  hopSegment,
  inlineText,
  parseEntryUri,
  storedEntry,
  isFanOutRule,
  MERGE_STAGE,
  foldSuperseded,
  parseSnapshotUri,
  roleMismatch,
  withFold,
  snapshotContent,
  writeKey,
  validateHandoff,
  type WriteReceipt,
  type Artifact,
  type Evaluator,
  type HandoffV1,
  type Pipeline,
  type StageNameOf,
  type ToolTried,
} from '../contracts';
import { constraintBreaches, masksPersonalData, redactPersonalDataFor } from '../contracts/constraints';
import type { StageCard, StageResult, StageWork } from '../contracts/stages';
import { sha256Hex } from '../src/worker/store/content';
import { withHopText } from '../src/stream/hop-text';
import type { DeliveryFacts, StageRecord, Store, WritesStore } from '../src/worker/store';
import { asyncLocalStorage, Context, log } from '@temporalio/activity';
import type { ApplicationFailure } from '@temporalio/common';
import { takeInDoubtDecision } from './effect-ledger';
import { stageFailure } from './failures';
import { whileHeartbeating } from './heartbeat';
import { appendSegments } from './summary';
import { withTranscript } from './transcript-log';
import { openTurn, type StageTurn, type TurnOptions } from './turn';

export interface StageOutput {
  artifact: Artifact;
  body: unknown;
  cost_usd: number;
  tools_tried?: ToolTried[];
  open_questions?: string[];
  memory_refs?: string[];
  /** Only a critic sets this. */
  evaluator?: Evaluator;
  /** A writer's write (`writeOnce`): the job's result carries it. */
  receipt?: WriteReceipt;
  /** The stage's own summary segment, in its words: what it did, briefly and factually (one
   * line, at most LIMITS.shortText). Appended to the package's summary as
   * `hop <n> <stage> → <artifact type>: <summary>`, never re-summarised. */
  summary?: string;
}

/** How a pipeline's stage activities run: their turns' options, and the other pipelines they serve. */
export interface StageOptions extends TurnOptions {
  /**
   * Pipelines that reuse some of these cards (e.g. one reusing another's critic and writer). A worker registers one activity per stage name and a delivery does not say which
   * pipeline its job runs, so a writer whose card one of them shares takes evidence recorded by
   * the stages of any one of those pipelines (never a mix).
   */
  sharedWith?: readonly Pipeline[];
}

/**
 * Runs `work` for a delivery unless a result is already recorded under its key; records the
 * result (first one wins) and returns the recorded one. A retry after a crash between the work
 * and the report therefore returns what the first attempt recorded, or redoes idempotent work.
 * A result recorded by another delivery (concurrent, or repeated later) comes back marked, so
 * the rail acks it `duplicate` — or `rejected_conflict` when that delivery carried another
 * package. A writer first checks the package's provenance. Records are scoped by who delivers:
 * a job's own rail, or direct deliveries (`stageHop`), so neither can pre-empt, reuse or replay
 * the other's. It heartbeats throughout, so a crash is noticed within the card's heartbeat timeout.
 */
export async function runStageOnce(
  store: Store,
  pipeline: Pick<Pipeline, 'name' | 'versions' | 'entry' | 'get' | 'handovers' | 'routes'>,
  card: StageCard,
  delivery: StageWork,
  work: StageWorkFn,
  options: StageOptions = {},
): Promise<StageResult> {
  const pkg = checkDelivery(pipeline, card, delivery);
  const scope = deliveryScope();
  const key = scopedKey(scope, delivery.delivery_key);
  const facts = { ...deliveryFacts(pkg, card.name), job_id: scopedJob(scope, pkg.job_id) };
  return whileHeartbeating(async () => {
    const stored = await storeSnapshot(store, delivery.package);
    const prior = await store.findStageRecord(key);
    if (prior) return asAnswered(prior, facts);
    checkEntries(card, pkg);
    if (card.writes !== null)
      await checkProvenance(
        store,
        [pipeline, ...(options.sharedWith ?? []).filter((p) => p.get(card.name) === card)],
        pkg,
        scope,
      );
    const { turn, close } = await openTurn(
      store,
      pipeline,
      card,
      { package: pkg, edge: delivery.edge, hooks: delivery.hook_results, key },
      facts.job_id,
      options,
    );
    if (card.writes !== null) await takeInDoubtDecision(store, card, pkg, delivery.hook_results, key);
    // The model's text while it works goes to the job's stream (a rail's delivery: a direct one
    // belongs to no job a follower reads).
    // A job whose constraints mask personal data shows no live text: the stage masks what it
    // returns, and a delta cut mid-word could not be masked.
    const live = scope === 'rail' && !masksPersonalData(pkg.constraints);
    const output = live
      ? await withHopText(
          {
            store,
            jobId: pkg.job_id,
            hop: pkg.hop?.count ?? 0,
            stage: card.name,
            showArguments: new Set(card.tools.filter((t) => t.showArguments).map((t) => t.name)),
            attempt: activityAttempt(),
            chain: pkg.hop?.chain ?? [],
          },
          () => work(pkg, turn),
        )
      : await work(pkg, turn);
    checkReceipt(card, output);
    const { transcript, handover } = await close(output);
    const recorded = await store.recordStageCompletion(
      key,
      {
        package: await emit(
          store,
          card,
          delivery.store_entry ? await withStoredEntry(store, pkg) : pkg,
          output,
          transcript,
          stored,
        ),
        artifact: output.artifact,
        cost_usd: output.cost_usd,
        body: output.body,
        ...(output.receipt ? { receipt: output.receipt } : {}),
        ...(handover
          ? {
              handover: {
                used: handover.used,
                tokens: handover.tokens,
                ...(handover.fell_back ? { fell_back: true } : {}),
              },
            }
          : {}),
      },
      facts,
    );
    return asAnswered(recorded, facts);
  });
}

/**
 * The per-hop snapshot: the package as the rail delivered it, stored under the address the
 * rail put in its `context_ref` (the same canonical bytes give the same sha256). A worker whose
 * bytes hash differently (it would be a converter bug) says so and works on: a missing snapshot
 * must not cost the job its hop. True when the store holds the snapshot at its address, so the
 * stage may fold the package it emits behind it.
 */
export async function storeSnapshot(store: Store, delivered: HandoffV1): Promise<boolean> {
  const address = delivered.context_ref === undefined ? undefined : parseSnapshotUri(delivered.context_ref);
  if (!address) return false;
  const hex = await store.putContent(snapshotContent(delivered));
  if (hex === address.sha) return true;
  // Held already under its address: the bytes the rail addressed (the replay diff seeds the recorded ones).
  if ((await store.getContent(address.sha)) !== null) return true;
  log.warn('snapshot address mismatch: the stored package hashes differently from its context_ref', {
    context_ref: delivered.context_ref,
    stored: hex,
  });
  return false;
}

/** Who delivers: the job's own rail (`handoffJob`, whose workflow id is the job id), or a direct
 * delivery (`stageHop`). Outside an activity (unit tests call stages directly): the rail. */
export type DeliveryScope = 'rail' | 'direct';

export function deliveryScope(): DeliveryScope {
  return asyncLocalStorage.getStore()?.info.workflowType === 'stageHop' ? 'direct' : 'rail';
}

/** Direct deliveries keep their records apart (`direct:` keys and job ids): a stageHop chain under
 * job id X is never job X's evidence, and never answers X's deliveries. */
export const scopedKey = (scope: DeliveryScope, key: string) => (scope === 'direct' ? `direct:${key}` : key);
export const scopedJob = (scope: DeliveryScope, jobId: string) => (scope === 'direct' ? `direct:${jobId}` : jobId);

/** What identifies a delivery: the package as delivered to this activity (its workflow, run and
 * activity id: a retry is the same delivery, a twin workflow delivering the same bytes in the
 * same millisecond is not), and the package less the rail's hop and ack (what a repeated
 * delivery of one package shares). */
export function deliveryFacts(pkg: HandoffV1, stage: string): DeliveryFacts {
  const info = asyncLocalStorage.getStore()?.info;
  const receiver = info
    ? `${info.workflowExecution?.workflowId ?? ''}/${info.workflowExecution?.runId ?? ''}/${info.activityId}`
    : '';
  return {
    job_id: pkg.job_id,
    stage,
    delivery_sha: sha256Hex(`${receiver}\n${canonicalJson(pkg)}`),
    package_sha: packageSha(pkg),
  };
}

/** The package less the rail's hop, ack and snapshot address: what every delivery of one package shares. */
export function packageSha(pkg: HandoffV1): string {
  const { hop: _hop, ack: _ack, context_ref: _snapshot, ...content } = pkg;
  return sha256Hex(canonicalJson(content));
}

/** A record this delivery made, as is; another delivery's, marked. A record from before
 * deliveries were hashed cannot be told apart, so it counts as another package's (fail closed). */
export function asAnswered(
  record: StageRecord,
  facts: { delivery_sha: string | null; package_sha: string },
): StageResult {
  if (record.delivery_sha !== null && record.delivery_sha === facts.delivery_sha) return record.result;
  return {
    ...record.result,
    recorded_by_other: record.package_sha !== null && record.package_sha === facts.package_sha ? 'same' : 'different',
  };
}

/** The package as the critic judged it, less what changes after: hop, ack, snapshot address, the
 * wallet the rail charged, and the summary (a running record the next stages append to, not evidence). */
function judgedContent(pkg: HandoffV1): string {
  const { hop: _hop, ack: _ack, context_ref: _snapshot, budget: _budget, summary: _summary, ...content } = pkg;
  return canonicalJson(content);
}

/** What provenance reads of a pipeline: its entry type, its stages, and the types its fan-outs merge. */
export type EvidenceRules = Pick<Pipeline, 'entry' | 'get' | 'routes'>;
type Recorded = { stage: string; result: StageResult };

/**
 * Provenance: a writer acts only on evidence recorded for this job, in this scope. Every artifact
 * but the job's entry must have been recorded by a stage of this pipeline for this job id (the
 * same bytes recorded for another job, or by direct deliveries for a rail job, do not count), or
 * by the rail's merge of one of its fan-outs, or as a fork's edit, and the newest — what the writer takes — by a
 * critic whose recorded verdict is `pass` over exactly this package (its artifacts, constraints,
 * goal: everything but what the rail changes after). Given several pipelines (a writer they
 * share), the evidence must hold under one of them; refused, the reason is the one under the
 * pipeline that explains the most of it (the job's own, as far as the evidence can tell).
 */
export async function checkProvenance(
  store: Store,
  pipelines: EvidenceRules | readonly EvidenceRules[],
  pkg: HandoffV1,
  scope: DeliveryScope = 'rail',
): Promise<void> {
  const candidates = 'get' in pipelines ? [pipelines] : pipelines;
  const jobId = scopedJob(scope, pkg.job_id);
  const records = await Promise.all(
    pkg.artifacts
      .slice(1)
      .map(async (artifact) =>
        (await store.findRecordedArtifacts(jobId, artifact.uri)).filter(
          (r) => r.result.artifact.type === artifact.type,
        ),
      ),
  );
  let refusal: { explained: number; failure: ApplicationFailure } | undefined;
  for (const pipeline of candidates) {
    const why = provenanceRefusal(pipeline, pkg, records);
    if (!why) return;
    if (!refusal || why.explained > refusal.explained) refusal = why;
  }
  throw (
    refusal?.failure ?? stageFailure('ArtifactInvalid', `no pipeline to check job ${pkg.job_id}'s evidence against`)
  );
}

/** Why `pkg` is not evidence under `pipeline`, and how many of its artifacts that pipeline's
 * records explain; null when all, ending in a pass. `records[i]`: what was recorded for artifact i + 1. */
function provenanceRefusal(
  pipeline: EvidenceRules,
  pkg: HandoffV1,
  records: readonly (readonly Recorded[])[],
): { explained: number; failure: ApplicationFailure } | null {
  const [entry, ...evidence] = pkg.artifacts;
  if (!entry || entry.type !== pipeline.entry) {
    return {
      explained: 0,
      failure: stageFailure(
        'ArtifactInvalid',
        `the first artifact must be the job's ${pipeline.entry}, not ${entry?.type ?? 'nothing'}`,
      ),
    };
  }
  // The rail records a fan-out's merge itself, under its merge step's name, and a fork's edit
  // under its own (evidence of the fork's, never a verdict: only a critic's record passes).
  const merges = new Set(pipeline.routes.filter(isFanOutRule).map((r) => r.merge));
  let newest: readonly Recorded[] = [];
  for (const [i, artifact] of evidence.entries()) {
    newest = (records[i] ?? []).filter(
      (r) =>
        pipeline.get(r.stage) !== undefined ||
        r.stage === FORK_EDIT_STAGE ||
        (r.stage === MERGE_STAGE && merges.has(artifact.type)),
    );
    if (newest.length === 0) {
      return {
        explained: i + 1,
        failure: stageFailure(
          'ArtifactInvalid',
          `${artifact.type} ${artifact.uri.slice(0, 80)} was not recorded for job ${pkg.job_id} by a stage of this pipeline`,
        ),
      };
    }
  }
  const content = judgedContent(pkg);
  const passed = newest.some(
    (r) =>
      pipeline.get(r.stage)?.role === 'critic' &&
      r.result.package.evaluator.last_verdict === 'pass' &&
      judgedContent(r.result.package) === content,
  );
  return passed
    ? null
    : {
        explained: pkg.artifacts.length,
        failure: stageFailure(
          'VerdictNotPassing',
          `no passing verdict recorded for job ${pkg.job_id} over this package`,
        ),
      };
}

/** Constraint policies hold on what a writer actually writes, whatever the verdict said. */
export function refuseBreaches(constraints: readonly string[], written: string, stage: string): void {
  const breaches = constraintBreaches(constraints, { text: written, toolsUsed: [] });
  if (breaches.length > 0)
    throw stageFailure(
      'VerdictNotPassing',
      `${stage} refuses to write: ${breaches.map((b) => `${b.policy}: ${b.breach}`).join('; ')}`,
    );
}

/**
 * A writer's write to its card's system, at most once per job: keyed `job_id:stage:artifact_type`
 * (`writeKey`), held to the job's constraints first (`text`: the prose written, when there is
 * any), its receipt naming the card's system. A key that already holds another write (another
 * chain got there first, e.g. direct deliveries under this job id) is refused, never reported as
 * this job's. The writer puts the receipt on its output (`receipt`) for the job's result.
 */
export async function writeOnce(
  writes: Pick<WritesStore, 'writeOnce'>,
  card: Pick<StageCard, 'name' | 'outputs' | 'writes'>,
  pkg: Pick<HandoffV1, 'job_id' | 'constraints'>,
  write: { reference: string; payload: string; text?: string },
): Promise<WriteReceipt> {
  if (card.writes === null)
    throw stageFailure('StageInputInvalid', `${card.name} declares no system it writes; only a writer writes`);
  if (write.text !== undefined) refuseBreaches(pkg.constraints, write.text, card.name);
  const key = writeKey(pkg.job_id, card);
  const receipt = await writes.writeOnce({
    key,
    system: card.writes,
    reference: write.reference,
    payload: write.payload,
  });
  refuseForeignWrite(card.name, key, receipt, {
    system: card.writes,
    reference: write.reference,
    payload_hash: `sha256:${sha256Hex(write.payload)}`,
  });
  return receipt;
}

/** A receipt under `key` that is not this write's: another chain's, refused. */
export function refuseForeignWrite(
  stage: string,
  key: string,
  receipt: Pick<WriteReceipt, 'system' | 'reference' | 'payload_hash'>,
  ours: Pick<WriteReceipt, 'system' | 'reference' | 'payload_hash'>,
): void {
  if (
    receipt.system !== ours.system ||
    receipt.reference !== ours.reference ||
    receipt.payload_hash !== ours.payload_hash
  ) {
    throw stageFailure(
      'VerdictNotPassing',
      `${stage} refuses: write key ${key} already holds another write (to ${receipt.system} ${receipt.reference}); nothing was written for this job`,
    );
  }
}

/** Only a writer puts a receipt on its output, and only for the system its card declares. */
function checkReceipt(card: StageCard, output: StageOutput): void {
  if (output.receipt && output.receipt.system !== card.writes) {
    throw stageFailure(
      'StageInputInvalid',
      `${card.name} reported a write to ${output.receipt.system}, but its card writes ${card.writes ?? 'nothing'}`,
    );
  }
}

/** The second line behind the rail's ack: a stage never works on a delivery meant for another
 * stage, a malformed package, or a package whose newest artifact it does not take. */
function checkDelivery(pipeline: Pick<Pipeline, 'versions'>, card: StageCard, delivery: StageWork): HandoffV1 {
  if (delivery.stage !== card.name) {
    throw stageFailure('StageInputInvalid', `delivery for stage "${String(delivery.stage)}" reached "${card.name}"`);
  }
  if (
    typeof delivery.delivery_key !== 'string' ||
    delivery.delivery_key.length === 0 ||
    delivery.delivery_key.length > 500
  ) {
    throw stageFailure(
      'StageInputInvalid',
      `${card.name}: delivery_key must be a non-empty string of at most 500 characters`,
    );
  }
  // The rail's own validator (ajv, the versions this stage reads): a stage never reads a package
  // the rail would have refused. No upgrade here: the rail delivers what the stage reads.
  const checked = validateHandoff(delivery.package, { accept: card.packageVersions, registry: pipeline.versions });
  if (!checked.ok || checked.value !== delivery.package) {
    const issues = checked.ok
      ? [`/schema ${String((delivery.package as { schema?: unknown }).schema)} is not read by ${card.name}`]
      : checked.errors.slice(0, 5).map((e) => `${e.path || '/'} ${e.message}`);
    throw stageFailure(
      'StageInputInvalid',
      `${card.name}: package is not a valid ${card.packageVersions.join(' | ')} (${issues.join('; ')})`,
      { issues },
    );
  }
  const role = roleMismatch(card, checked.value);
  if (role) throw stageFailure('StageInputInvalid', role);
  // The rail compares what we emit with what it delivered, so pass on the caller's object
  // (unknown fields byte-for-byte).
  return delivery.package as HandoffV1;
}

/** The store is content-addressed across jobs: an entry address is honoured for its own job only.
 * Checked after the delivery key's record is looked up, because the rail does not make this check:
 * a package under a recorded key is answered by the record (and refused `rejected_conflict` when it
 * differs), as the rail's lookup before the stage would have answered it. */
function checkEntries(card: StageCard, pkg: HandoffV1): void {
  const foreign = pkg.artifacts.find((a) => (parseEntryUri(a.uri)?.jobId ?? pkg.job_id) !== pkg.job_id);
  if (foreign)
    throw stageFailure(
      'StageInputInvalid',
      `${card.name}: ${foreign.type} ${foreign.uri.slice(0, 120)} is another job's entry, not job ${pkg.job_id}'s`,
    );
}

/** The attempt of the activity this runs in (1 outside one: a stage run directly, in a test). */
function activityAttempt(): number {
  try {
    return Context.current().info.attempt;
  } catch {
    return 1;
  }
}

/** A stage's work: what it does with the package it was delivered, in its turn of the job's
 * conversation (`turn.prompt()` before calling a model, `turn.reply()` with what it answered). */
export type StageWorkFn = (pkg: HandoffV1, turn: StageTurn) => Promise<StageOutput>;
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
  options: StageOptions = {},
): { [S in K]: StageActivity } {
  const activities = {} as Record<string, StageActivity>;
  for (const [name, run] of Object.entries(work) as [string, StageWorkFn][]) {
    const card = pipeline.get(name);
    if (!card) throw new Error(`pipeline "${pipeline.name}" has no stage "${name}"`);
    activities[name] = (delivery: StageWork) => runStageOnce(store, pipeline, card, delivery, run, options);
  }
  return activities as { [S in K]: StageActivity };
}

/** An entry lacking what the job cannot invent: the gaps become open questions on the package the
 * rail escalates with, never a guess. */
export function entryFieldsMissing(stage: string, pkg: HandoffV1, gaps: string[]): ApplicationFailure {
  return stageFailure('EntryFieldsMissing', `${stage} refuses to guess: ${gaps.join('; ')}`, {
    open_questions: gaps,
    package: { ...pkg, open_questions: appendUnique(pkg.open_questions, gaps) },
  });
}

export function appendUnique<T>(list: readonly T[], extra: readonly T[] | undefined): T[] {
  return [...list, ...(extra ?? []).filter((item) => !list.includes(item))];
}

/** The package with its inline entry moved to the store (contracts/entry.ts), when it has one:
 * the entry's body stays job-scoped in the store, and the rail sees only its address and hash. */
async function withStoredEntry(store: Store, pkg: HandoffV1): Promise<HandoffV1> {
  const [entry, ...rest] = pkg.artifacts;
  const text = inlineText(entry);
  if (!entry || text === undefined) return pkg;
  const sha = await store.putContent(text);
  return { ...pkg, artifacts: [storedEntry(pkg.job_id, entry, text, sha), ...rest] };
}

/** Input package + output artifact (+ questions, tools, memory refs, a critic's evaluator), with
 * the job's log referenced at this turn and the stage's segment appended to the summary (the
 * oldest segments moved to the store once it is long: activities/summary.ts). A segment is masked
 * under redact_personal_data like the prose, whatever the stage put in it. The superseded
 * artifacts move off behind the delivered snapshot, when this worker stored it (`snapshotStored`):
 * so the package does not grow with the job (contracts/earlier-artifacts.ts). */
async function emit(
  store: Store,
  card: StageCard,
  pkg: HandoffV1,
  output: StageOutput,
  transcript: string,
  snapshotStored: boolean,
): Promise<HandoffV1> {
  const said = output.summary === undefined ? undefined : redactPersonalDataFor(pkg.constraints, output.summary);
  const segment = hopSegment(pkg.hop?.count ?? 0, card.name, output.artifact.type, said);
  const summary = await appendSegments(store, pkg.summary, [segment]);
  const fold = foldSuperseded([...pkg.artifacts, output.artifact]);
  const snapshot = snapshotStored ? pkg.context_ref : undefined;
  return {
    ...(snapshot !== undefined && fold.moved.length > 0
      ? withFold(pkg, fold, snapshot)
      : { ...pkg, artifacts: [...pkg.artifacts, output.artifact] }),
    ...(summary !== undefined ? { summary } : {}),
    open_questions: appendUnique(pkg.open_questions, output.open_questions),
    tools_tried: [...pkg.tools_tried, ...(output.tools_tried ?? [])],
    memory_refs: withTranscript(appendUnique(pkg.memory_refs, output.memory_refs), transcript),
    evaluator: output.evaluator ?? pkg.evaluator,
  };
}
