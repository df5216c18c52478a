/**
 * Where a job goes next: the pipeline's pure routing table. The sequence is
 * known when the pipeline is defined, so a table decides, not a model.
 */
import {
  LIMITS,
  isCompleteRule,
  isFanOutRule,
  matchRoute,
  newestArtifact,
  type AckRecord,
  type FanOutRule,
  type HandoffReason,
  type HandoffV1,
  type Hop,
  type HookResult,
  type Pipeline,
  type RouteFacts,
  type ToolCallAwaiting,
} from '../../contracts/rail';
import type { HopOutcome } from './hop-decisions';
import { spendRevision } from './budget';

export interface HopStep {
  kind: 'hop';
  to: string;
  reason: string;
  /** The typed reason for the hop block. */
  handoff?: HandoffReason;
  package: HandoffV1;
  /** Set when a human sends the hop (the sender is otherwise the stage that last held it). */
  from?: string;
  actor?: string;
  /** What the human's decision hands the stage beside the package (the record's delta). */
  hooks?: HookResult[];
}

/** A fan-out: `package` goes to every specialist of `rule` at once, then to the merge. `done`:
 * branches that already answered (kept when a refused branch is retried after a decision). */
export interface FanOutStep {
  kind: 'fanout';
  rule: FanOutRule;
  reason: string;
  package: HandoffV1;
  done: readonly Branch[];
  /** The hub's hop when the fan-out began (kept when a refused branch is retried). */
  hub?: Hop;
  from?: string;
  actor?: string;
  hooks?: HookResult[];
}

/** The stage a fan-out shows while its branches run (HandrailStage, the details): its stages joined, `a+b`. */
export const fanOutStage = (stages: readonly string[]): string => stages.join('+');

/** A specialist's hop in a fan-out and how it ended. */
export interface Branch {
  stage: string;
  outcome: HopOutcome;
}

export type Route =
  | HopStep
  | FanOutStep
  | { kind: 'complete'; reason: string }
  /** `resume`: the stage that was blocked; `retry`: the refused step to try again after a
   * decision; `ack`: the refusal, when it is not the job's newest ack (a fan-out's branch);
   * `after`: the hop the human follows, when it is not the package's (a fan-out's branches). */
  | {
      kind: 'escalate';
      reason: string;
      resume?: string;
      retry?: HopStep | FanOutStep;
      ack?: AckRecord;
      after?: Hop;
      /** The tool call the blocked stage's loop stopped at, waiting for this human's word. */
      tool_call?: ToolCallAwaiting;
    };

/** Bodies the rail recorded with each artifact type, newest last (what routing rules read). */
export type RecordedBodies = Readonly<Record<string, Record<string, unknown>>>;

export function routeFacts(pkg: HandoffV1, bodies: RecordedBodies = {}): RouteFacts {
  return {
    package: pkg,
    newest: newestArtifact(pkg)?.type,
    verdict: pkg.evaluator.last_verdict,
    body: (type) => bodies[type],
  };
}

/**
 * Return to sender: the hop's target was not picked up (`target_unavailable`), so the
 * package goes back to the stage that sent it, whose card decides — another stage (`reroute`,
 * `degrade`) or, by default, a human, with the reason named and the refused hop to retry.
 */
export function returnToSender(
  pipeline: Pick<Pipeline, 'get'>,
  returned: HandoffV1,
  failed: HopStep,
  reason: string,
): Route {
  const sender = returned.hop ? pipeline.get(returned.hop.from) : undefined;
  const back = sender?.onTargetUnavailable;
  if (!sender || back === undefined || back === 'escalate')
    return { kind: 'escalate', reason, resume: failed.to, retry: failed };
  return {
    kind: 'hop',
    to: back.to,
    reason: `returned to ${sender.name}: ${failed.to} unavailable, ${back.action} to ${back.to}`.slice(
      0,
      LIMITS.shortText,
    ),
    // Another stage takes the work because its target is not there.
    handoff: 'load_balancing',
    package: returned,
    from: sender.name,
  };
}

/** The next step for a package that a stage just emitted (or that a job starts with). */
export function route(pipeline: Pick<Pipeline, 'routes'>, pkg: HandoffV1, bodies: RecordedBodies = {}): Route {
  const facts = routeFacts(pkg, bodies);
  const rule = matchRoute(pipeline, facts);
  if (!rule) return { kind: 'escalate', reason: `no route after ${facts.newest ?? 'an empty package'}` };
  if (isCompleteRule(rule)) return { kind: 'complete', reason: rule.complete };
  if (isFanOutRule(rule)) return { kind: 'fanout', rule, reason: rule.reason, package: pkg, done: [] };
  const handoff = rule.handoff ? { handoff: rule.handoff } : {};
  if (!rule.spendsRevision) return { kind: 'hop', to: rule.to, reason: rule.reason, ...handoff, package: pkg };
  const budget = spendRevision(pkg.budget);
  const critic = criticOf(pkg);
  return budget
    ? {
        kind: 'hop',
        to: rule.to,
        reason:
          `${rule.reason}: ${pkg.evaluator.failures.join('; ') || `${critic} failed the work of ${rule.to}`}`.slice(
            0,
            LIMITS.shortText,
          ),
        ...handoff,
        package: { ...pkg, budget },
      }
    : { kind: 'escalate', reason: revisionsExhausted(critic, rule.to), resume: rule.to };
}

/** The stage whose verdict sent the package back: the one that last held it. */
const criticOf = (pkg: HandoffV1): string => (pkg.hop ? `the critic ${pkg.hop.to}` : 'the critic');

/** Why a job escalates when its critic still fails the work and no revision is left: the roles,
 * by the pipeline's own stage names. */
export function revisionsExhausted(critic: string, reviser: string): string {
  return `revisions exhausted: ${critic} still fails the work of the reviser ${reviser}`.slice(0, LIMITS.shortText);
}
