/**
 * Where a job goes next: a pure routing table (seed 004 "routing rules are a pure table").
 * The sequence is known at intake, so a table decides, not a model (seed 001).
 */
import type { HandoffV1 } from '../../contracts';
import { spendRevision } from './budget';
import { newestArtifact } from './ack';

export interface HopStep {
  kind: 'hop';
  to: string;
  reason: string;
  package: HandoffV1;
  /** Set when a human sends the hop (the sender is otherwise the stage that last held it). */
  from?: string;
  actor?: string;
}

export type Route =
  | HopStep
  | { kind: 'complete'; reason: string }
  /** `resume`: the stage that was blocked; `retry`: the refused hop to try again after a decision. */
  | { kind: 'escalate'; reason: string; resume?: string; retry?: HopStep };

interface Rule {
  /** Type of the newest artifact on the package. */
  after: string;
  verdict?: 'pass' | 'fail';
  decide(pkg: HandoffV1): Route;
}

const hop = (to: string, reason: string) => (pkg: HandoffV1): Route => ({ kind: 'hop', to, reason, package: pkg });

export const ROUTES: readonly Rule[] = [
  { after: 'ticket.raw', decide: hop('intake', 'new ticket') },
  { after: 'intake.v1', decide: hop('retrieve', 'find help-center evidence') },
  { after: 'chunks.v1', decide: hop('draft', 'draft from cited chunks') },
  { after: 'no_hit.v1', decide: hop('draft', 'draft a no_match summary') },
  { after: 'summary_md', decide: hop('judge', 'judge the draft') },
  { after: 'verdict.v1', verdict: 'pass', decide: hop('writeback', 'verdict pass: write the CRM note') },
  {
    after: 'verdict.v1',
    verdict: 'fail',
    decide: (pkg) => {
      const budget = spendRevision(pkg.budget);
      return budget
        ? { kind: 'hop', to: 'draft', reason: `revise: ${pkg.evaluator.failures.join('; ') || 'judge failed the draft'}`.slice(0, 500), package: { ...pkg, budget } }
        : { kind: 'escalate', reason: 'revisions exhausted: the judge still fails the draft', resume: 'draft' };
    },
  },
  { after: 'receipt.v1', decide: () => ({ kind: 'complete', reason: 'written back' }) },
];

/** The next step for a package that a stage just emitted (or that a job starts with). */
export function route(pkg: HandoffV1): Route {
  const type = newestArtifact(pkg)?.type;
  const verdict = pkg.evaluator.last_verdict;
  const rule = ROUTES.find((r) => r.after === type && (r.verdict === undefined || r.verdict === verdict));
  return rule ? rule.decide(pkg) : { kind: 'escalate', reason: `no route after ${type ?? 'an empty package'}` };
}
