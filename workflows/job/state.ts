/**
 * A job's state: its package, its wallet's figures, its acks and what its stages left, with the
 * bookkeeping every step shares. The steps (hops, fan-out, escalation) act on it; visibility
 * publishes it; the queries read it.
 */
import { workflowInfo } from '@temporalio/workflow';
import {
  LIMITS,
  isTranscriptUri,
  movedByStage,
  type AckRecord,
  type CarriedJob,
  type CarriedProgress,
  type HandoffV1,
  type JobRequest,
  type JobResult,
  type JobStatus,
  type Pipeline,
  type Snapshot,
  type WriteReceipt,
} from '../../contracts/rail';
import type { Escalation, JobStatusView, RailStatus } from '../definitions';
import type { HopOutcome, StageProxies } from '../run-hop';
import { Reservations, addUsd } from '../rail/budget';
import type { HandoverLine } from '../rail/details';
import { route, type Route } from '../rail/routing';
import { withInDoubt } from './in-doubt';
import { Visibility } from './visibility';

/** Unstored snapshots a job keeps for the `snapshot` query (the newest). */
const KEPT_SNAPSHOTS = 16;

export type EscalateStep = Extract<Route, { kind: 'escalate' }>;

/** What the request fixes for the whole job. */
export interface JobSettings {
  maxHops: number;
  decisionTimeout: string;
  traceparent: string;
  owner: string | undefined;
  continueAfter: JobRequest['continue_after'];
}

export class JobState {
  package: HandoffV1;
  stage: string;
  status: RailStatus = 'running';
  readonly acks: AckRecord[] = [];
  /** Per hop that ran: the handover its stage got and the log it left (for the details). */
  readonly handovers: HandoverLine[] = [];
  /** Bodies of the newest artifact of each type, as their stages reported them (routing reads them). */
  readonly bodies: Record<string, Record<string, unknown>> = {};
  spentUsd = 0;
  overspentUsd = 0;
  /** What running hops hold reserved from the wallet (several at once during a fan-out). */
  readonly reservations = new Reservations();
  /** URIs and hashes of outputs stages moved off the package (the newest `LIMITS.movedOutputs`):
   * the package no longer lists them, and a revision must differ from them too. */
  readonly movedOutputs = new Set<string>();
  /** Snapshots no worker stored (refused hops, duplicates, hops to a human), newest kept. */
  readonly snapshots = new Map<string, string>();
  receipt?: WriteReceipt;
  /** The open escalation, with the step it blocked. */
  escalation?: Escalation & { step: EscalateStep };
  lastActor = '';
  countAtLastHumanDecision = 0;
  reason?: string;
  /** This run's number: 1 unless earlier runs continued as new into it. */
  readonly runs: number = 1;
  /** Acks of earlier runs no longer kept (a run hands on the newest), counted by kind. */
  readonly earlierAcks: Record<string, number> = {};
  private readonly visibility = new Visibility();
  /** The acks as the last delivery carried them (contracts/stages.ts `CarriedProgress`). */
  private carriedAcks: readonly AckRecord[] = [];

  constructor(
    readonly settings: JobSettings,
    readonly pipeline: Pipeline,
    readonly stages: StageProxies,
    start: { package: HandoffV1; stage: string },
    carried?: CarriedJob,
  ) {
    this.package = start.package;
    this.stage = start.stage;
    if (carried) {
      this.runs = carried.runs + 1;
      this.package = carried.package;
      this.stage = carried.stage;
      Object.assign(this.bodies, carried.bodies);
      this.spentUsd = carried.spent_usd;
      this.overspentUsd = carried.overspent_usd;
      this.receipt = carried.receipt;
      this.acks.push(...carried.acks);
      Object.assign(this.earlierAcks, carried.earlier_acks);
      this.handovers.push(...carried.handovers);
      for (const { uri, content } of carried.snapshots) this.snapshots.set(uri, content);
      this.lastActor = carried.last_actor;
      this.countAtLastHumanDecision = carried.count_at_last_human_decision;
      for (const moved of carried.moved_outputs ?? []) this.movedOutputs.add(moved);
    }
  }

  get jobId(): string {
    return workflowInfo().workflowId;
  }

  /** Where the package goes next, by the pipeline's table. */
  route(): Route {
    return route(this.pipeline, this.package, this.bodies);
  }

  /** Records what a hop spent, produced and acked (in place of its admission ack, when that was
   * recorded already). */
  record(outcome: HopOutcome, admitted?: AckRecord): void {
    if (outcome.unstoredSnapshot) this.keepSnapshot(outcome.unstoredSnapshot);
    this.spentUsd = addUsd(this.spentUsd, outcome.costUsd);
    this.overspentUsd = addUsd(this.overspentUsd, outcome.overspentUsd);
    if (outcome.ok && outcome.result) {
      const { artifact, body } = outcome.result;
      if (body && typeof body === 'object') this.bodies[artifact.type] = body as Record<string, unknown>;
      if (outcome.result.receipt) this.receipt = outcome.result.receipt;
      const transcript = outcome.result.package.memory_refs.find(isTranscriptUri);
      this.handovers.push({
        hop: outcome.acks[0]!.hop,
        stage: outcome.stage,
        ...outcome.result.handover,
        ...(transcript ? { transcript } : {}),
      });
    }
    const acks = withInDoubt(outcome, this.pipeline, this.jobId);
    const at = admitted ? this.acks.indexOf(admitted) : -1;
    if (at >= 0) this.acks.splice(at, 1, ...acks);
    else this.acks.push(...acks);
  }

  /** Remembers what the stage moved off the package it was delivered (its own fold, accepted). */
  rememberMoved(delivered: HandoffV1, emitted: HandoffV1): void {
    for (const key of movedByStage(delivered, emitted)) this.movedOutputs.add(key);
    keepNewest(this.movedOutputs, LIMITS.movedOutputs);
  }

  /** Bounded: a job refused over and over must not grow its memory without end. */
  keepSnapshot({ uri, content }: Snapshot): void {
    this.snapshots.set(uri, content);
    keepNewest(this.snapshots, KEPT_SNAPSHOTS);
  }

  /** Keeps the Web UI current (search attributes and details). */
  publish(): void {
    this.visibility.publish(this.view(), this.pipeline.name, this.acks, this.handovers);
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
      ...(this.runs > 1 ? { runs: this.runs, earlier_acks: this.earlierAcks } : {}),
    };
  }

  /** The records a delivery carries for the job's followers: the status, and the acks from the
   * first one that changed since the last delivery carried them (an admission ack is replaced in
   * place when its hop settles). Deterministic: it reads only the job's state. */
  carried(): CarriedProgress {
    let from = 0;
    while (from < this.acks.length && this.acks[from] === this.carriedAcks[from]) from++;
    this.carriedAcks = this.acks.slice();
    return { acks_from: from, acks: this.acks.slice(from), status: { ...this.view() } };
  }

  /** The newest `LIMITS.acks` acks, and every older one (earlier runs' included) counted by kind. */
  keptAcks(): { acks: AckRecord[]; earlier: Record<string, number> } {
    const dropped = this.acks.slice(0, Math.max(0, this.acks.length - LIMITS.acks));
    const earlier = { ...this.earlierAcks };
    for (const a of dropped) earlier[a.ack] = (earlier[a.ack] ?? 0) + 1;
    return { acks: this.acks.slice(dropped.length), earlier };
  }

  result(status: JobStatus, reason: string): JobResult {
    const { acks, earlier } = this.keptAcks();
    return {
      job_id: this.jobId,
      status,
      reason,
      package: this.package,
      acks,
      ...(Object.keys(earlier).length > 0 ? { earlier_acks: earlier } : {}),
      ...(this.receipt ? { receipt: this.receipt } : {}),
      spent_usd: this.spentUsd,
      ...(this.overspentUsd > 0 ? { overspent_usd: this.overspentUsd } : {}),
      hops: this.package.hop?.count ?? 0,
      ...(this.runs > 1 ? { runs: this.runs } : {}),
    };
  }
}

/** Drops the oldest entries (in insertion order) past `cap`, stopping at the first kept one. */
function keepNewest<K>(entries: { size: number; keys(): Iterable<K>; delete(key: K): boolean }, cap: number): void {
  for (const old of entries.keys()) {
    if (entries.size <= cap) return;
    entries.delete(old);
  }
}

function publicEscalation(e: Escalation): Escalation {
  return {
    reasons: e.reasons,
    blocked: e.blocked,
    options: e.options,
    since: e.since,
    ...(e.tool_call ? { tool_call: e.tool_call } : {}),
  };
}
