/**
 * Escalation is a hop to a human: the package, the reasons and the allowed decisions are visible
 * through queries, details and the escalation's record; the job waits for `decide` or the
 * timeout, and the decision is one more typed hop, its actor on its ack.
 */
import {
  HUMAN_NOTE_PREFIX,
  IN_DOUBT_DECIDED,
  LIMITS,
  TOOL_APPROVAL_DECIDED,
  snapshotOf,
  type AckRecord,
  type Hop,
  type HookResult,
  type AckToolCall,
  type HumanDecision,
  type ToolApprovalDecided,
} from '../../contracts/rail';
import { ackRecord } from '../rail/ack';
import { topUp } from '../rail/budget';
import { decisionOptions } from '../rail/decisions';
import { describeInDoubt } from '../rail/details';
import { HUMAN, deliveryKey, nextHop } from '../rail/hop-chain';
import type { FanOutStep, HopStep, Route } from '../rail/routing';
import { traceHop } from '../tracing';
import { Decisions } from './decisions';
import { decidedInDoubt } from './in-doubt';
import { EscalationRecords } from './records';
import type { Escalation } from '../definitions';
import type { EscalateStep, JobState } from './state';

type HumanSender = { from: string; actor: string; hooks?: HookResult[] };

export class Escalations {
  readonly records: EscalationRecords;
  readonly decisions: Decisions;

  constructor(
    private readonly job: JobState,
    recordsBegun = 0,
  ) {
    this.records = new EscalationRecords(recordsBegun);
    this.decisions = new Decisions(job, this.records);
  }

  /** Escalates and waits: the next step the human's decision makes, or how the wait ended. */
  async escalate(step: EscalateStep): Promise<Route | 'timeout' | 'rejected'> {
    const job = this.job;
    const startedAt = Date.now();
    const acksBefore = job.acks.length;
    const hop = this.open(step);
    await this.records.begin(job);
    try {
      const decision = await this.decisions.next(job.settings.decisionTimeout);
      if (!decision) return 'timeout';
      job.escalation = undefined;
      job.lastActor = decision.actor;
      job.status = 'running';
      // The decision is recorded like any hop's ack, with its actor (and a top-up's amounts).
      const inDoubt = decidedInDoubt(decision);
      const ack = humanAck(job, hop, describeDecision(decision), decision.actor);
      const word = step.tool_call && decision.tool_call ? { tool_call: ackedCall(step, decision.tool_call) } : {};
      job.acks.push({ ...ack, ...(inDoubt ? { in_doubt: inDoubt } : {}), ...word });
      const hooks =
        decision.handoff_record === undefined
          ? await this.records.close('decided', decision)
          : this.decisions.takeClaimedHooks();
      // The job runs again: the next step's start (or the job's end) publishes it, in this same
      // workflow task, so the Web UI stops listing it as escalated at once.
      return apply(job, decision, step, hooks);
    } finally {
      // The human's hop is traced like any other, from the escalation to the decision (or the
      // timeout, or the job's cancellation).
      const at = {
        job_id: job.jobId,
        stage: HUMAN,
        from: hop.from,
        reason: step.reason,
        traceparent: job.settings.traceparent,
      };
      traceHop({ ...at, started_at: startedAt, ended_at: Date.now(), acks: job.acks.slice(acksBefore), cost_usd: 0 });
    }
  }

  /** The hop to the human: the job shows as escalated, with the decisions it allows. */
  private open(step: EscalateStep): Hop {
    const job = this.job;
    const hop = nextHop(step.after ?? job.package.hop, HUMAN, step.reason, undefined, 'escalation');
    job.package = { ...job.package, hop };
    job.status = 'escalated';
    job.stage = HUMAN;
    const options = decisionOptions(job.package, step.ack ?? job.acks[job.acks.length - 1], step.resume, job.pipeline);
    const call = step.tool_call;
    job.escalation = {
      reasons: [step.reason],
      blocked: step.resume ?? 'route',
      // A call waiting for a word: approve (with the word: run it, or deny it) or reject the job.
      options: call ? options.filter((o) => o === 'approve' || o === 'reject') : options,
      since: new Date().toISOString(),
      ...(call ? { tool_call: shownCall(job, step) } : {}),
      step,
    };
    // A writer's write in doubt waits for this human: their hop says so too (the status's last ack).
    const inDoubt = job.acks.at(-1)?.in_doubt;
    const ack = humanAck(job, hop, `escalated: ${step.reason}`);
    job.acks.push({
      ...ack,
      ...(inDoubt?.resolution === 'escalated' ? { in_doubt: inDoubt } : {}),
      ...(call ? { tool_call: ackedCall(step) } : {}),
    });
    job.publish();
    return hop;
  }
}

/** The ack of the human's hop: one when the job escalates (naming the package the human got),
 * one when the human decides. */
function humanAck(job: JobState, hop: Hop, reason: string, actor?: string): AckRecord {
  const at = {
    stage: HUMAN,
    hop,
    deliveryKey: deliveryKey({ job_id: job.jobId, hop }, HUMAN),
    traceparent: job.settings.traceparent,
    now: new Date(),
  };
  if (actor) return ackRecord({ ack: 'accepted', reason }, { ...at, actor });
  const ack = ackRecord({ ack: 'accepted', reason }, at);
  const snapshot = snapshotOf(job.jobId, { ...job.package, ack });
  job.keepSnapshot(snapshot);
  return { ...ack, snapshot: snapshot.uri };
}

/** Turns a human decision into the next step. The human's hop carries the actor on its ack. */
function apply(job: JobState, decision: HumanDecision, step: EscalateStep, hooks?: HookResult[]): Route | 'rejected' {
  job.countAtLastHumanDecision = job.package.hop?.count ?? 0;
  const said = [inDoubtHook(decision), toolCallHook(decision, step)].filter((h) => h !== undefined);
  const handed = said.length > 0 ? [...(hooks ?? []), ...said] : hooks;
  const human = { from: HUMAN, actor: decision.actor, ...(handed ? { hooks: handed } : {}) };
  switch (decision.action) {
    case 'reject':
      return 'rejected';
    case 'top_up':
      // The only way a wallet grows; the decision (actor, amounts) is recorded in the acks.
      job.package = { ...job.package, budget: topUp(job.package.budget, decision) };
      return resume(job, step, human, `top-up by ${decision.actor}`);
    case 'approve':
      return resume(job, step, human, `approved by ${decision.actor}`);
    case 'revise': {
      // decisionOptions offers revise only when the pipeline names a reviser.
      const note = decision.note ?? 'revise';
      job.package = {
        ...job.package,
        evaluator: {
          last_verdict: 'fail',
          failures: [...job.package.evaluator.failures, `${HUMAN_NOTE_PREFIX}${note}`].slice(-LIMITS.listItems),
        },
      };
      return {
        kind: 'hop',
        to: job.pipeline.reviser!,
        reason: `revision asked by ${decision.actor}: ${note}`.slice(0, LIMITS.shortText),
        package: job.package,
        ...human,
      };
    }
  }
}

/** A human's word on a write in doubt, for the writer's retried hop (the validator allows it only
 * on an approve of an escalated writer). */
function inDoubtHook(decision: HumanDecision): HookResult | undefined {
  if (decision.in_doubt === undefined) return undefined;
  return { event: IN_DOUBT_DECIDED, text: JSON.stringify({ ...decision.in_doubt, actor: decision.actor }) };
}

/** The call a human's hop is about, as its acks record it (eval counts them). */
function ackedCall(step: EscalateStep, word?: NonNullable<HumanDecision['tool_call']>): AckToolCall {
  const { name, digest } = step.tool_call!;
  return { name, digest, ...(word ? { verdict: word.verdict } : {}), ...(word?.args ? { edited: true } : {}) };
}

/** The call as the escalation shows it: editable where the blocked stage's grant of the tool
 * allows a human to run it with other arguments (the pipeline's card, not the stage's word). */
function shownCall(job: JobState, step: EscalateStep): NonNullable<Escalation['tool_call']> {
  const { name, call_id, args, digest } = step.tool_call!;
  const grant = step.resume ? job.pipeline.get(step.resume)?.tools.find((t) => t.name === name) : undefined;
  return { name, call_id, args, digest, ...(grant?.approvalEdits ? { editable: true as const } : {}) };
}

/** A human's word on the tool call the blocked stage's loop stopped at, for its resumed hop: the
 * call's digest as the rail computed it, and where its steps resume (the validator took the
 * decision only with that digest). */
function toolCallHook(decision: HumanDecision, step: EscalateStep): HookResult | undefined {
  const call = step.tool_call;
  if (!call || decision.tool_call === undefined) return undefined;
  const word: ToolApprovalDecided = {
    digest: call.digest,
    verdict: decision.tool_call.verdict,
    actor: decision.actor,
    ...(decision.note ? { note: decision.note } : {}),
    resume_key: call.resume_key,
    ...(decision.tool_call.args ? { args: decision.tool_call.args } : {}),
  };
  return { event: TOOL_APPROVAL_DECIDED, text: JSON.stringify(word) };
}

/** Retry what was blocked: the refused hop, or the routing decision with the new wallet. */
function resume(job: JobState, step: EscalateStep, human: HumanSender, reason: string): Route {
  // A retried step keeps no hook results of an earlier decision: only this one's go on.
  const { hooks: _earlier, ...retry } = step.retry ?? {};
  const next = step.retry ? ({ ...retry, package: job.package } as HopStep | FanOutStep) : job.route();
  return next.kind === 'hop' || next.kind === 'fanout'
    ? { ...next, reason: `${reason}: ${next.reason}`.slice(0, LIMITS.shortText), ...human }
    : next;
}

export function describeDecision(d: HumanDecision): string {
  const amounts = d.action === 'top_up' ? ` (+$${d.usd ?? 0}, +${d.revisions ?? 0} revisions)` : '';
  const inDoubt = decidedInDoubt(d);
  const runs = d.tool_call?.args ? 'runs with edited arguments' : 'runs';
  const call = d.tool_call ? `; the tool call ${d.tool_call.verdict === 'approve' ? runs : 'is denied'}` : '';
  return `decided ${d.action}${amounts} by ${d.actor}${d.note ? `: ${d.note}` : ''}${inDoubt ? `; ${describeInDoubt(inDoubt)}` : ''}${call}`;
}
