/**
 * `handoffJob`: one job's relay through its pipeline's stages, owned by deterministic code.
 * Every hop is acked before work, one wallet pays for all of them, the judge can send a draft
 * back while revisions remain, and anything the rail refuses goes to a human, whose decision is
 * one more typed hop. The routing table, stages and revisits come from the job's pipeline.
 */
import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  allHandlersFinished,
  condition,
  isCancellation,
  log,
  proxyActivities,
  setCurrentDetails,
  setHandler,
  upsertSearchAttributes,
  uuid4,
  workflowInfo,
} from '@temporalio/workflow';
import type { Duration } from '@temporalio/common';
import { HANDOFF_DECIDED_EVENT, HUMAN_NOTE_PREFIX, LIMITS, MERGE_STAGE, canonicalJson, entryBodyProblems, findPipeline, requestEntry, handoffDelta, isTranscriptUri, refusalLines, reservationUsd, snapshotOf, validators, type AckRecord, type HandoffCloseReason, type HandoffRecord, type HandoffV1, type Hop, type HookResult, type HumanDecision, type JobRequest, type JobResult, type JobStatus, type Pipeline, type Snapshot, type StageResult, type WriteReceipt } from '../contracts/rail';
import type { BeginRecordWork, CloseRecordWork, ClosedRecord } from '../activities/handoff-records';
import type { MergeWork } from '../activities/merge';
import { acksQuery, decideUpdate, packageQuery, snapshotQuery, statusQuery, type DecisionReceipt, type Escalation, type JobStatusView, type RailStatus } from './definitions';
import { describeFailure, runHop, type HopOutcome, type StageProxies } from './hop';
import { Reservations, addUsd, charge, topUp, type Reservation } from './rail/budget';
import { decisionOptions, validateDecision } from './rail/decisions';
import { DEFAULT_MAX_HOPS, HUMAN, deliveryKey, nextHop } from './rail/hops';
import { ackRecord } from './rail/ack';
import { jobStart } from './rail/first-package';
import { escalationKeys, escalationRecord } from './rail/handoff-record';
import { branchFailure, branchSegments, failedBranch, mergeHop, mergeKey, mergedBody, mergedPackage } from './rail/merge';
import { fanOutStage, returnToSender, route, type Branch, type FanOutStep, type HopStep, type Route } from './rail/routing';
import { renderDetails, type HandoverLine } from './rail/details';
import { HandrailAcks, HandrailStatus, SEARCH_ATTRIBUTES, jobSearchAttributes, type JobAttributes } from './search-attributes';
import { traceHop } from './tracing';

// The merge of a fan-out: one write of a content-addressed artifact and one keyed record.
const { mergeBranches } = proxyActivities<{ mergeBranches(work: MergeWork): Promise<StageResult> }>({
  startToCloseTimeout: '30s',
  retry: { maximumAttempts: 6, maximumInterval: '10s' },
  summary: 'merge',
});

// An escalation's handoff record. Its writes are keyed; a store that stays down only costs the
// record (logged), never the escalation.
const { beginHandoffRecord, closeHandoffRecord } = proxyActivities<{
  beginHandoffRecord(work: BeginRecordWork): Promise<HandoffRecord>;
  closeHandoffRecord(work: CloseRecordWork): Promise<ClosedRecord>;
}>({
  startToCloseTimeout: '30s',
  retry: { maximumAttempts: 8, maximumInterval: '30s' },
  summary: 'handoff record',
});

/** Unstored snapshots a job keeps for the `snapshot` query (the newest). */
const KEPT_SNAPSHOTS = 16;

/** How long an escalation waits for `decide` when the request does not say. */
export const DEFAULT_DECISION_TIMEOUT = '7 days';

/** The pipelines a rail runs, each with its stage activities proxied once. */
export interface RailPipelines {
  pipelines: readonly Pipeline[];
  stages: ReadonlyMap<string, StageProxies>;
}

/** The pipeline a request names (the first when it names none); an unknown one fails the
 * workflow at once, non-retryable, naming the ones this worker runs. */
export function pipelineFor(rail: RailPipelines, name: string | undefined, failureType: string): Pipeline {
  const pipeline = findPipeline(rail.pipelines, name);
  if (!pipeline) throw ApplicationFailure.nonRetryable(`unknown pipeline ${JSON.stringify(name)}; this worker runs ${rail.pipelines.map((p) => p.name).join(', ')}`, failureType);
  return pipeline;
}

/** The `handoffJob` workflow for these pipelines: a job names one in `pipeline` (the first by default). */
export function createHandoffJob(rail: RailPipelines): (request: JobRequest) => Promise<JobResult> {
  return async function handoffJob(input: JobRequest): Promise<JobResult> {
    let request: JobRequest;
    let pipeline: Pipeline;
    try {
      request = checkedRequest(input);
      pipeline = pipelineFor(rail, request.pipeline, 'InvalidJobRequest');
      checkEntry(request, pipeline);
    } catch (err) {
      refusedAtStart();
      throw err;
    }
    return await runJob(new Job(request, pipeline, rail.stages.get(pipeline.name)!));
  };
}

/** A job started with its first attributes (`startJob`) shows `running` until the rail publishes
 * otherwise: one refused before its first hop (an invalid request, a pipeline this worker does not
 * run) says `rejected` as it fails. Only a start that carried a status needs the correction. */
function refusedAtStart(): void {
  if (workflowInfo().typedSearchAttributes.get(HandrailStatus) !== undefined) {
    upsertSearchAttributes([{ key: HandrailStatus, value: 'rejected' }]);
  }
}

/** The request as the contract defines it, run under its own id; otherwise the job fails at
 * once (non-retryable, naming what is wrong) instead of a workflow task retried forever. */
function checkedRequest(input: unknown): JobRequest {
  if (!validators.jobRequest(input)) throw ApplicationFailure.nonRetryable(`invalid job request: ${refusalLines(validators.jobRequest.errors, 'request', 5).join('; ')}`, 'InvalidJobRequest');
  const request = input;
  const own = workflowInfo().workflowId;
  if (request.job_id !== own) {
    throw ApplicationFailure.nonRetryable(`job_id ${request.job_id} is not this workflow's id (${own}): a job runs under its own id`, 'InvalidJobRequest');
  }
  return request;
}

/** The request's entry as its pipeline declares it (`entry`, or the field it used to arrive in);
 * otherwise the job fails at once, non-retryable, naming what is wrong. */
function checkEntry(request: JobRequest, pipeline: Pipeline): void {
  const body = requestEntry(request, pipeline.entrySpec);
  const alias = pipeline.entrySpec.alias;
  if (request.entry !== undefined && alias !== undefined && request[alias] !== undefined) {
    throw ApplicationFailure.nonRetryable(`invalid job request: both entry and ${alias} given; send the ${pipeline.entry} as entry only`, 'InvalidJobRequest');
  }
  if (body === undefined) {
    throw ApplicationFailure.nonRetryable(`invalid job request: entry is required (a ${pipeline.entry} for pipeline ${pipeline.name})`, 'InvalidJobRequest');
  }
  const problems = entryBodyProblems(pipeline.entrySpec.schema, body, 5);
  if (problems.length > 0) {
    throw ApplicationFailure.nonRetryable(`invalid job request: entry is not a valid ${pipeline.entry} for pipeline ${pipeline.name}: ${problems.join('; ')}`, 'InvalidJobRequest');
  }
}

async function runJob(job: Job): Promise<JobResult> {
  try {
    let step: Route = job.route();
    for (;;) {
      if (step.kind === 'complete') return await job.finish('completed', step.reason);
      if (step.kind === 'escalate') {
        const next = await job.escalate(step);
        if (next === 'timeout') return await job.finish('escalated', `no decision within ${job.decisionTimeout}: ${step.reason}`);
        if (next === 'rejected') return await job.finish('rejected', `rejected by ${job.lastActor}`);
        step = next;
        continue;
      }
      if (step.kind === 'fanout') {
        const next = await job.fanOut(step);
        if (next.kind === 'ended') return await job.finish('rejected', next.reason);
        step = next;
        continue;
      }
      // Recorded here, not in a callback on the hop's promise: every promise costs (runHop).
      const outcome = job.recordHop(await job.hop(step));
      // The job id's evidence belongs to another package (a closed job started again, say):
      // no human decision can make it this job's, so the job ends here.
      const conflict = outcome.acks.find((a) => a.ack === 'rejected_conflict');
      if (conflict) return await job.finish('rejected', conflict.reason);
      const reason = outcome.failure ?? outcome.acks[outcome.acks.length - 1]!.reason;
      if (outcome.ok) step = job.route();
      else if (outcome.acks.some((a) => a.ack === 'target_unavailable')) step = returnToSender(job.pipeline, job.package, step, reason);
      else step = { kind: 'escalate', reason, resume: step.to, retry: step };
    }
  } catch (err) {
    if (isCancellation(err)) return await CancellationScope.nonCancellable(() => job.finish('cancelled', 'cancelled by an operator'));
    throw err;
  }
}

/** A fan-out that ends the job: another package's result under one of its keys (rejected). */
interface Ended {
  kind: 'ended';
  reason: string;
}

/** The job's state and the operator surface over it (queries, update, search attributes, details). */
class Job {
  package: HandoffV1;
  readonly acks: AckRecord[] = [];
  /** Per hop that ran: the handover its stage got and the log it left (for the details). */
  private readonly handovers: HandoverLine[] = [];
  status: RailStatus = 'running';
  stage: string;
  /** Bodies of the newest artifact of each type, as their stages reported them (routing reads them). */
  private bodies: Record<string, Record<string, unknown>> = {};
  spentUsd = 0;
  overspentUsd = 0;
  /** What running hops hold reserved from the wallet (several at once during a fan-out). */
  private readonly reservations = new Reservations();
  /** Snapshots no worker stored (refused hops, duplicates, hops to a human), newest kept. */
  private readonly snapshots = new Map<string, string>();
  receipt?: WriteReceipt;
  escalation?: Escalation & { step: Extract<Route, { kind: 'escalate' }> };
  pendingDecision?: HumanDecision;
  lastActor = '';
  countAtLastHumanDecision = 0;
  /** The escalation's handoff record while it is open, with the key that closes it. */
  private openRecord?: { id: string; closeKey: string };
  /** A decision taken through the open record, while its close is being written: no other
   * decision is taken meanwhile, and the decision counts only once the close is. */
  private claiming = false;
  /** What the close of a decision's record handed on (its delta), for the hop the decision makes. */
  private claimedHooks?: HookResult[];
  private escalations = 0;
  private readonly owner: string | undefined;
  reason?: string;
  readonly maxHops: number;
  readonly decisionTimeout: string;
  readonly traceparent: string;
  /** The search attributes as visibility has them (last upserted, or set at the start), canonical JSON by key. */
  private readonly published = new Map<string, string>();

  constructor(
    request: JobRequest,
    readonly pipeline: Pipeline,
    private readonly stages: StageProxies,
  ) {
    this.maxHops = request.max_hops ?? DEFAULT_MAX_HOPS;
    this.decisionTimeout = request.decision_timeout ?? DEFAULT_DECISION_TIMEOUT;
    this.traceparent = request.traceparent ?? newTraceparent();
    this.owner = request.owner;
    const start = jobStart(request, pipeline, this.traceparent);
    this.package = start.package;
    this.stage = start.stage;
    this.takeStartAttributes();

    setHandler(packageQuery, () => this.package, { description: 'The handoff.v1 package as it stands now.' });
    setHandler(acksQuery, () => this.acks, { description: 'Every ack of every hop, oldest first.' });
    setHandler(statusQuery, () => this.view(), { description: 'Status, stage, hops, wallet, and the open escalation if any.' });
    setHandler(snapshotQuery, (uri) => this.snapshots.get(uri) ?? null, { description: 'A refused, duplicate or human hop\'s package as delivered, by its snapshot address (the acks name it).' });
    setHandler(
      decideUpdate,
      (decision) => (decision.handoff_record === undefined ? this.take(decision) : this.takeThroughRecord(decision)),
      {
        description: 'A human decision on an escalated job: approve | reject | revise | top_up, with an actor.',
        // Synchronous (ENGINEERING.md): a rejected decision never reaches history.
        validator: (decision) => validateDecision(decision, this.escalation, this.pendingDecision !== undefined || this.claiming, this.openRecord?.id),
      },
    );
  }

  private take(decision: HumanDecision): DecisionReceipt {
    this.pendingDecision = decision;
    return { action: decision.action, actor: decision.actor, next: describeNext(decision, this.escalation?.blocked, this.pipeline.reviser) };
  }

  /** A decision through the escalation's record is taken only if the record's close on it is
   * written: a cancel or another's accept that reached the store first refuses it (the update
   * fails, the job goes on waiting), and a decision taken is one the record shows. */
  private async takeThroughRecord(decision: HumanDecision): Promise<DecisionReceipt> {
    const open = this.openRecord!;
    const decided = { action: decision.action, actor: decision.actor, handoff_record: open.id, ...(decision.note !== undefined ? { note: decision.note } : {}) };
    this.claiming = true;
    let closed: HandoffRecord;
    try {
      ({ record: closed } = await CancellationScope.nonCancellable(() => closeHandoffRecord({ id: open.id, key: open.closeKey, reason: 'decided', decision: decided })));
    } catch (err) {
      throw ApplicationFailure.nonRetryable(`the decision was not taken: ${err instanceof ActivityFailure ? (err.cause?.message ?? err.message) : String(err)}`, 'HandoffRecordRefused');
    } finally {
      this.claiming = false;
    }
    // The job's own close (cancelled, timed out) under the same key may have come first.
    if (closed.close_reason !== 'decided' || closed.accepted_by !== decision.actor) {
      throw ApplicationFailure.nonRetryable(`the decision was not taken: handoff record ${open.id} was closed as ${closed.close_reason ?? closed.state}`, 'HandoffRecordRefused');
    }
    this.openRecord = undefined;
    this.claimedHooks = decisionHooks(closed, decided);
    return this.take(decision);
  }

  /** Where the package goes next, by the pipeline's table. */
  route(): Route {
    return route(this.pipeline, this.package, this.bodies);
  }

  get jobId(): string {
    return workflowInfo().workflowId;
  }

  /** Runs one agent hop; `recordHop` takes its outcome. Not async itself (deliver). */
  hop(step: HopStep): Promise<HopOutcome> {
    this.stage = step.to;
    this.publish();
    return this.deliver(step);
  }

  /** Records everything a hop acked and what its stage emitted. */
  recordHop(outcome: HopOutcome): HopOutcome {
    // The stage appended its own summary segment (activities/summary.ts); a refused hop adds none.
    if (outcome.package) this.package = outcome.package;
    this.record(outcome);
    return outcome;
  }

  /**
   * A fan-out: every specialist not yet answered gets the hub's package at once, each hop with its
   * own reservation (admitted one after another, so each sees the others'). When all answered the
   * rail merges them; a branch refused or failed escalates the job with the branch named, and the
   * branches that answered are kept for the retry.
   */
  async fanOut(step: FanOutStep): Promise<Route | Ended> {
    const pending = step.rule.fanOut.filter((stage) => !step.done.some((b) => b.stage === stage));
    this.stage = fanOutStage(pending);
    // A retried fan-out with every branch answered goes straight to its merge, which publishes.
    if (pending.length > 0) this.publish();
    const settled = await Promise.allSettled(
      pending.map(async (stage): Promise<Branch> => {
        const hop: HopStep = {
          kind: 'hop',
          to: stage,
          reason: step.reason,
          handoff: step.rule.handoff ?? 'specialization',
          package: step.package,
          ...(step.from ? { from: step.from } : {}),
          ...(step.actor ? { actor: step.actor } : {}),
          ...(step.hooks ? { hooks: step.hooks } : {}),
        };
        // Each branch's acks take the place of its admission ack, so they read in fan-out order
        // however the branches finish (and the acks query shows a branch at work).
        let admitted: AckRecord | undefined;
        const outcome = await this.deliver(hop, (ack) => this.acks.push((admitted = ack)));
        // The hub's wallet pays each branch; the branch's own package (its summary segment
        // included) stays the branch's until the merge.
        this.package = { ...this.package, budget: charge(this.package.budget, outcome.costUsd).budget };
        this.record(outcome, admitted);
        return { stage, outcome };
      }),
    );
    // Every branch has ended (a cancelled job cancels them all) before the job moves on.
    const crashed = settled.find((s) => s.status === 'rejected');
    if (crashed) throw crashed.reason;
    const ran = settled.map((s) => (s as PromiseFulfilledResult<Branch>).value);
    const answered = [...step.done, ...ran.filter((b) => b.outcome.ok)];
    const failed = failedBranch(step.rule, ran);
    if (failed) {
      const ack = failed.outcome.acks[failed.outcome.acks.length - 1];
      return { kind: 'escalate', reason: branchFailure(step.rule, failed), resume: failed.stage, retry: { ...step, done: answered }, ...(ack ? { ack } : {}) };
    }
    // A branch whose delivery key already holds another package's result ends the job, as a serial hop's does.
    const conflict = ran.flatMap((b) => b.outcome.acks).find((a) => a.ack === 'rejected_conflict');
    if (conflict) return { kind: 'ended', reason: conflict.reason };
    return (await this.merge(step, answered)) ?? this.route();
  }

  /**
   * Joins the branches' artifacts into one, recorded once under `job_id:merge:<type>`. A merge
   * that cannot be recorded escalates (every branch kept, so a retry only merges); one recorded
   * from another package under this job's key is a conflict, like a serial hop's.
   */
  private async merge(step: FanOutStep, branches: readonly Branch[]): Promise<Route | Ended | undefined> {
    const startedAt = Date.now();
    this.stage = MERGE_STAGE;
    this.publish();
    const hop = mergeHop(this.package, step.rule);
    // The merge is a step of the job's trace like a hop: a span from the branches' join to its record.
    const traceMerge = (acks: AckRecord[], failure?: string) =>
      traceHop({ job_id: this.jobId, stage: MERGE_STAGE, from: hop.from, reason: step.rule.reason, traceparent: this.traceparent, started_at: startedAt, ended_at: Date.now(), acks, cost_usd: 0, ...(failure ? { failure } : {}) });
    const key = mergeKey(this.jobId, step.rule);
    const at = { stage: MERGE_STAGE, hop, deliveryKey: key, traceparent: this.traceparent };
    const parts = branches.map((b) => `${b.stage} (${b.outcome.result!.artifact.type})`).join(', ');
    const ack = ackRecord({ ack: 'accepted', reason: `merging ${parts} into ${step.rule.merge}` }, { ...at, now: new Date() });
    const pkg = mergedPackage(this.package, step.rule, branches, hop, ack);
    let result: StageResult;
    try {
      result = await mergeBranches({
        key,
        type: step.rule.merge,
        body: mergedBody(step.rule, branches),
        package: pkg,
        segments: branchSegments(this.package, step.rule, branches),
        branches: branches.map((b) => ({ memory_refs: b.outcome.result!.package.memory_refs })),
      });
    } catch (err) {
      if (isCancellation(err)) throw err;
      const failure = `merge into ${step.rule.merge} failed: ${describeFailure(err)}`.slice(0, LIMITS.shortText);
      traceMerge([ack], failure);
      return { kind: 'escalate', reason: failure, resume: MERGE_STAGE, retry: { ...step, done: branches } };
    }
    if (result.recorded_by_other === 'different') {
      const conflict = ackRecord({ ack: 'rejected_conflict', reason: `another package was already merged into ${step.rule.merge} for this job; its merge is not this one's` }, { ...at, now: new Date() });
      this.acks.push(conflict);
      traceMerge([conflict]);
      return { kind: 'ended', reason: conflict.reason };
    }
    // The same merge recorded earlier (a second run) answers with the recorded artifact.
    const final = result.recorded_by_other ? ackRecord({ ack: 'duplicate', reason: `${step.rule.merge} already merged for this job; returning the recorded artifact` }, { ...at, now: new Date() }) : ack;
    // Summary and log ref are the merge's, as recorded: the hub's with the branches' segments
    // appended and their turns joined by the activity. Recorded merges from before segments carry
    // the summary the rail had then, which the next stage's recorded result starts with.
    const { summary, memory_refs } = result.package;
    this.package = { ...pkg, ...(summary !== undefined ? { summary } : {}), memory_refs, artifacts: [...pkg.artifacts, result.artifact], ack: final };
    if (result.body && typeof result.body === 'object') this.bodies[step.rule.merge] = result.body as Record<string, unknown>;
    this.acks.push(final);
    traceMerge([final]);
    return undefined;
  }

  /** Runs a hop under a reservation of its stage's worst case, made the moment the hop is
   * accepted and released however the hop ends. `onAdmitted`: told of the hop's first ack.
   * Not async itself: every workflow promise costs a stack trace (runHop). */
  private deliver(step: HopStep, onAdmitted?: (ack: AckRecord) => void): Promise<HopOutcome> {
    let reservation: Reservation | undefined;
    const card = this.pipeline.get(step.to);
    return runHop(
      {
        pipeline: this.pipeline,
        stage: step.to,
        package: step.package,
        reason: step.reason,
        from: step.from,
        actor: step.actor,
        ...(step.handoff ? { handoff: step.handoff } : {}),
        ...(step.hooks ? { hookResults: step.hooks } : {}),
        maxHops: this.maxHops,
        countAtLastHumanDecision: this.countAtLastHumanDecision,
        fallbackTraceparent: this.traceparent,
        fallbackJobId: this.jobId,
        heldUsd: () => this.reservations.heldUsd,
      },
      {
        // The rail made every earlier delivery of this job itself: each key is new.
        checkPriorDelivery: false,
        stages: this.stages,
        onAck: (ack) => {
          if (ack.ack === 'accepted' && card) reservation = this.reservations.reserve(card.name, ack.hop, reservationUsd(card));
          onAdmitted?.(ack);
        },
        onEnd: () => {
          if (reservation) this.reservations.release(reservation);
        },
      },
    );
  }

  /** Records what a hop spent, produced and acked (in place of its admission ack, when that was
   * recorded already), and publishes it. */
  private record(outcome: HopOutcome, admitted?: AckRecord): void {
    if (outcome.unstoredSnapshot) this.keepSnapshot(outcome.unstoredSnapshot);
    this.spentUsd = addUsd(this.spentUsd, outcome.costUsd);
    this.overspentUsd = addUsd(this.overspentUsd, outcome.overspentUsd);
    if (outcome.ok && outcome.result) {
      const { artifact, body } = outcome.result;
      if (body && typeof body === 'object') this.bodies[artifact.type] = body as Record<string, unknown>;
      if (outcome.result.receipt) this.receipt = outcome.result.receipt;
      const transcript = outcome.result.package.memory_refs.find(isTranscriptUri);
      this.handovers.push({ hop: outcome.acks[0]!.hop, stage: outcome.stage, ...outcome.result.handover, ...(transcript ? { transcript } : {}) });
    }
    const at = admitted ? this.acks.indexOf(admitted) : -1;
    if (at >= 0) this.acks.splice(at, 1, ...outcome.acks);
    else this.acks.push(...outcome.acks);
    // A fan-out's branch ends in a workflow task of its own: no step starts in it to publish.
    if (admitted) this.publish();
  }

  /**
   * Escalation is a hop to a human: the package, the reasons and the allowed decisions are
   * visible through queries and details; the job waits for `decide` or the timeout.
   */
  async escalate(step: Extract<Route, { kind: 'escalate' }>): Promise<Route | 'timeout' | 'rejected'> {
    const hop = nextHop(this.package.hop, HUMAN, step.reason, undefined, 'escalation');
    this.package = { ...this.package, hop };
    this.status = 'escalated';
    this.stage = HUMAN;
    this.escalation = {
      reasons: [step.reason],
      blocked: step.resume ?? 'route',
      options: decisionOptions(this.package, step.ack ?? this.acks[this.acks.length - 1], step.resume, this.pipeline),
      since: new Date().toISOString(),
      step,
    };
    const startedAt = Date.now();
    const acksBefore = this.acks.length;
    this.acks.push(this.humanAck(hop, `escalated: ${step.reason}`));
    this.publish();
    await this.beginRecord();

    try {
      let decided = await condition(() => this.pendingDecision !== undefined, this.decisionTimeout as Duration);
      // A decision whose record is being closed at the deadline counts if its close is written.
      if (!decided && this.claiming) decided = await condition(() => !this.claiming).then(() => this.pendingDecision !== undefined);
      if (!decided) return 'timeout';
      const decision = this.pendingDecision!;
      this.pendingDecision = undefined;
      this.escalation = undefined;
      this.lastActor = decision.actor;
      this.status = 'running';
      // The decision is recorded like any hop's ack, with its actor (and a top-up's amounts).
      this.acks.push(this.humanAck(hop, describeDecision(decision), decision.actor));
      const hooks = decision.handoff_record === undefined ? await this.closeRecord('decided', decision) : this.claimedHooks;
      this.claimedHooks = undefined;
      // The job runs again: the next step's start (or the job's end) publishes it, in this same
      // workflow task, so the Web UI stops listing it as escalated at once.
      return this.apply(decision, step, hooks);
    } finally {
      // The human's hop is traced like any other, from the escalation to the decision (or the
      // timeout, or the job's cancellation).
      traceHop({
        job_id: this.jobId,
        stage: HUMAN,
        from: hop.from,
        reason: step.reason,
        traceparent: this.traceparent,
        started_at: startedAt,
        ended_at: Date.now(),
        acks: this.acks.slice(acksBefore),
        cost_usd: 0,
      });
    }
  }

  /** Begins the escalation's handoff record, for a human to find and take (seed 003). Not
   * cancellable: a record the store took is one the job must close. */
  private async beginRecord(): Promise<void> {
    const keys = escalationKeys(this.jobId, workflowInfo().runId, ++this.escalations);
    const record = escalationRecord(this.package, this.escalation!, { workspace: workflowInfo().namespace, project: this.pipeline.name, owner: this.owner });
    try {
      const begun = await CancellationScope.nonCancellable(() => beginHandoffRecord({ key: keys.begin, record }));
      this.openRecord = { id: begun.id, closeKey: keys.close };
    } catch (err) {
      log.warn('the escalation has no handoff record', { job_id: this.jobId, error: String(err) });
    }
  }

  /** Closes the open record, if any; a decider takes it first. A decision's record comes back as
   * its delta (seed 003's re-injection), which the next stage gets beside the package: not in
   * the package, whose provenance the stages behind a verdict check. */
  private async closeRecord(reason: HandoffCloseReason, decision?: HumanDecision): Promise<HookResult[] | undefined> {
    const open = this.openRecord;
    if (!open) return undefined;
    this.openRecord = undefined;
    const decided = decision && { action: decision.action, actor: decision.actor, ...(decision.note !== undefined ? { note: decision.note } : {}) };
    try {
      const { record } = await CancellationScope.nonCancellable(() => closeHandoffRecord({ id: open.id, key: open.closeKey, reason, ...(decided ? { decision: decided } : {}) }));
      return decided && decisionHooks(record, decided);
    } catch (err) {
      log.warn('the handoff record could not be closed', { job_id: this.jobId, record: open.id, error: String(err) });
      return undefined;
    }
  }

  /** The ack of the human's hop: one when the job escalates (naming the package the human got),
   * one when the human decides. */
  private humanAck(hop: Hop, reason: string, actor?: string): AckRecord {
    const at = { stage: HUMAN, hop, deliveryKey: deliveryKey({ job_id: this.jobId, hop }, HUMAN), traceparent: this.traceparent, now: new Date() };
    if (actor) return ackRecord({ ack: 'accepted', reason }, { ...at, actor });
    const ack = ackRecord({ ack: 'accepted', reason }, at);
    const snapshot = snapshotOf(this.jobId, { ...this.package, ack });
    this.keepSnapshot(snapshot);
    return { ...ack, snapshot: snapshot.uri };
  }

  /** Bounded: a job refused over and over must not grow its memory without end. */
  private keepSnapshot({ uri, content }: Snapshot): void {
    this.snapshots.set(uri, content);
    for (const old of this.snapshots.keys()) if (this.snapshots.size > KEPT_SNAPSHOTS) this.snapshots.delete(old);
  }

  /** Turns a human decision into the next step. The human's hop carries the actor on its ack. */
  private apply(decision: HumanDecision, step: Extract<Route, { kind: 'escalate' }>, hooks?: HookResult[]): Route | 'rejected' {
    this.countAtLastHumanDecision = this.package.hop?.count ?? 0;
    const human = { from: HUMAN, actor: decision.actor, ...(hooks ? { hooks } : {}) };
    switch (decision.action) {
      case 'reject':
        return 'rejected';
      case 'top_up':
        // The only way a wallet grows; the decision (actor, amounts) is recorded in the acks.
        this.package = { ...this.package, budget: topUp(this.package.budget, decision) };
        return this.resume(step, human, `top-up by ${decision.actor}`);
      case 'approve':
        return this.resume(step, human, `approved by ${decision.actor}`);
      case 'revise': {
        // decisionOptions offers revise only when the pipeline names a reviser.
        const note = decision.note ?? 'revise';
        this.package = { ...this.package, evaluator: { last_verdict: 'fail', failures: [...this.package.evaluator.failures, `${HUMAN_NOTE_PREFIX}${note}`].slice(-LIMITS.listItems) } };
        return { kind: 'hop', to: this.pipeline.reviser!, reason: `revision asked by ${decision.actor}: ${note}`.slice(0, LIMITS.shortText), package: this.package, ...human };
      }
    }
  }

  /** Retry what was blocked: the refused hop, or the routing decision with the new wallet. */
  private resume(step: Extract<Route, { kind: 'escalate' }>, human: { from: string; actor: string; hooks?: HookResult[] }, reason: string): Route {
    // A retried step keeps no hook results of an earlier decision: only this one's go on.
    const { hooks: _earlier, ...retry } = step.retry ?? {};
    const next = step.retry ? { ...retry, package: this.package } as HopStep | FanOutStep : this.route();
    return next.kind === 'hop' || next.kind === 'fanout' ? { ...next, reason: `${reason}: ${next.reason}`.slice(0, LIMITS.shortText), ...human } : next;
  }

  async finish(status: JobStatus, reason: string): Promise<JobResult> {
    // No decision is taken from here on (the validator refuses without an escalation), so none
    // can be acknowledged while the record closes and then be dropped.
    this.escalation = undefined;
    // Only a job waiting on a human holds an open record: it timed out or was cancelled.
    // Awaited only when there is a record to close: a workflow promise costs a stack trace (runHop).
    if (this.openRecord) await this.closeRecord(status === 'cancelled' ? 'job_cancelled' : 'timed_out');
    // Handlers still running are awaited, and in a cancelled scope the wait throws and the job ends
    // cancelled; otherwise nothing is awaited (a promise costs a stack trace, runHop). The wait
    // comes before publishing, so a job cancelled during its write publishes `cancelled` alone,
    // never `completed` first.
    if (!allHandlersFinished() || CancellationScope.current().consideredCancelled) await condition(allHandlersFinished);
    this.status = status;
    this.reason = reason;
    this.publish();
    return {
      job_id: this.jobId,
      status,
      reason,
      package: this.package,
      acks: this.acks,
      ...(this.receipt ? { receipt: this.receipt } : {}),
      spent_usd: this.spentUsd,
      ...(this.overspentUsd > 0 ? { overspent_usd: this.overspentUsd } : {}),
      hops: this.package.hop?.count ?? 0,
    };
  }

  view(): JobStatusView {
    const last = this.acks[this.acks.length - 1];
    return {
      job_id: this.jobId,
      status: this.status,
      stage: this.stage,
      hops: this.package.hop?.count ?? 0,
      usd_remaining: this.package.budget?.usd_remaining ?? 0,
      revisions_remaining: this.package.budget?.revisions_remaining ?? 0,
      spent_usd: this.spentUsd,
      reserved_usd: this.reservations.heldUsd,
      reservations: this.reservations.list().map(({ stage, hop, usd }) => ({ stage, hop, usd })),
      last_verdict: this.package.evaluator?.last_verdict ?? 'none',
      ...(last ? { last_ack: last } : {}),
      ...(this.escalation ? { escalation: publicEscalation(this.escalation) } : {}),
      ...(this.reason ? { reason: this.reason } : {}),
    };
  }

  /** Records `json` as the key's published value; false when it already was. */
  private publishedChange(key: string, json: string): boolean {
    if (this.published.get(key) === json) return false;
    this.published.set(key, json);
    return true;
  }

  /** What the job was started with counts as published
   * (`startJob` sets the job's first attributes, workflows/rail/first-package.ts
   * `startingAttributes`), so the first hop upserts only what differs — nothing when the client
   * got them right, all of them when a caller set none. An absent list is an empty one: upserting
   * an empty list removes the attribute. Read in the constructor, before the run upserts any. */
  private takeStartAttributes(): void {
    for (const { key, value } of workflowInfo().typedSearchAttributes.getAll()) {
      if (Object.hasOwn(SEARCH_ATTRIBUTES, key.name)) this.published.set(key.name, canonicalJson(value));
    }
    if (!this.published.has(HandrailAcks.name)) this.published.set(HandrailAcks.name, canonicalJson([]));
  }

  /** What the job shows in visibility for this view of it. */
  private attributes(view: JobStatusView): JobAttributes {
    return {
      status: view.status,
      stage: view.stage,
      ack: view.last_ack?.ack ?? 'none',
      verdict: view.last_verdict,
      hops: view.hops,
      usdRemaining: view.usd_remaining,
      // Keys added to an existing upsert need no patch: replay matches the command, not what it carries.
      pipeline: this.pipeline.name,
      acks: [...new Set(this.acks.map((a) => a.ack))],
    };
  }

  /** Keeps the Web UI current: the search attributes that changed since the last upsert, for
   * filtering, and markdown details for reading. A change is published when the next step (hop,
   * fan-out, merge) starts or the job ends — every change is followed by one in the same workflow
   * task — so once per hop however many changes the hop made. */
  private publish(): void {
    const view = this.view();
    const attributes = jobSearchAttributes(this.attributes(view));
    const changed = attributes.filter((a) => this.publishedChange(a.key.name, canonicalJson(a.value)));
    if (changed.length > 0) upsertSearchAttributes(changed);
    setCurrentDetails(renderDetails(view, this.acks, this.handovers));
  }
}

/** What a decision's record hands the next hop: its delta, unless the record was given up
 * through the API (cancelled), which hands nothing on. */
function decisionHooks(record: HandoffRecord, decided: Pick<HumanDecision, 'action' | 'actor' | 'note'>): HookResult[] | undefined {
  return record.state === 'cancelled' ? undefined : [{ event: HANDOFF_DECIDED_EVENT, text: handoffDelta(record, decided) }];
}

function publicEscalation(e: Escalation): Escalation {
  return { reasons: e.reasons, blocked: e.blocked, options: e.options, since: e.since };
}

function describeDecision(d: HumanDecision): string {
  const amounts = d.action === 'top_up' ? ` (+$${d.usd ?? 0}, +${d.revisions ?? 0} revisions)` : '';
  return `decided ${d.action}${amounts} by ${d.actor}${d.note ? `: ${d.note}` : ''}`;
}

function describeNext(decision: HumanDecision, blocked: string | undefined, reviser: string | undefined): string {
  switch (decision.action) {
    case 'reject':
      return 'the job ends as rejected';
    case 'revise':
      // decisionOptions offers revise only when the pipeline names a reviser.
      return `the work goes back to the reviser ${reviser ?? '(none)'} with the note as a failure`;
    case 'top_up':
      return `the wallet grows and the job resumes at ${blocked ?? 'the next stage'}`;
    case 'approve':
      return `the job resumes at ${blocked ?? 'the next stage'}`;
  }
}

/** W3C traceparent from workflow-seeded randomness (deterministic on replay). */
function newTraceparent(): string {
  const hex = () => uuid4().replace(/-/g, '');
  return `00-${hex()}-${hex().slice(0, 16)}-01`;
}
