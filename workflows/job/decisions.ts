/**
 * The `decide` update: a human's decision on the escalation the job waits on. The validator is
 * synchronous, so a refused decision never reaches history. A decision taken through the
 * escalation's record counts only once the record's close on it is written; no other decision is
 * taken meanwhile.
 */
import { condition, setHandler } from '@temporalio/workflow';
import type { Duration } from '@temporalio/common';
import type { HookResult, HumanDecision } from '../../contracts/rail';
import { decideUpdate, type DecisionReceipt } from '../definitions';
import { validateDecision } from '../rail/decisions';
import type { EscalationRecords } from './records';
import type { JobState } from './state';

export class Decisions {
  private pending?: HumanDecision;
  /** A decision taken through the open record, while its close is being written. */
  private claiming = false;
  /** What the close of a decision's record handed on (its delta), for the hop the decision makes. */
  private claimedHooks?: HookResult[];
  /** Updates this run's handler took (each counts against Temporal's updates per run). */
  handled = 0;

  constructor(
    private readonly job: JobState,
    private readonly records: EscalationRecords,
  ) {
    setHandler(decideUpdate, (decision) => this.handle(decision), {
      description: 'A human decision on an escalated job: approve | reject | revise | top_up, with an actor.',
      validator: (decision) =>
        validateDecision(
          decision,
          this.job.escalation,
          this.pending !== undefined || this.claiming,
          this.records.openId,
          this.blockedWrites(),
        ),
    });
  }

  /** The decision on the open escalation, or undefined when none came within `timeout`. A
   * decision whose record is being closed at the deadline counts if its close is written. */
  async next(timeout: string): Promise<HumanDecision | undefined> {
    let decided = await condition(() => this.pending !== undefined, timeout as Duration);
    if (!decided && this.claiming)
      decided = await condition(() => !this.claiming).then(() => this.pending !== undefined);
    if (!decided) return undefined;
    const decision = this.pending!;
    this.pending = undefined;
    return decision;
  }

  /** Whether the escalation blocks a writer's hop (a word on its write in doubt is taken then only). */
  private blockedWrites(): boolean {
    const blocked = this.job.escalation?.blocked;
    return blocked !== undefined && (this.job.pipeline.get(blocked)?.writes ?? null) !== null;
  }

  /** What the record of a decision taken through it handed on, once (the next hop gets it). */
  takeClaimedHooks(): HookResult[] | undefined {
    const hooks = this.claimedHooks;
    this.claimedHooks = undefined;
    return hooks;
  }

  private handle(decision: HumanDecision): DecisionReceipt | Promise<DecisionReceipt> {
    this.handled++;
    return decision.handoff_record === undefined ? this.take(decision) : this.takeThroughRecord(decision);
  }

  private take(decision: HumanDecision): DecisionReceipt {
    this.pending = decision;
    return {
      action: decision.action,
      actor: decision.actor,
      next: describeNext(decision, this.job.escalation?.blocked, this.job.pipeline.reviser),
    };
  }

  private async takeThroughRecord(decision: HumanDecision): Promise<DecisionReceipt> {
    this.claiming = true;
    try {
      this.claimedHooks = await this.records.closeOnDecision(decision);
    } finally {
      this.claiming = false;
    }
    return this.take(decision);
  }
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
