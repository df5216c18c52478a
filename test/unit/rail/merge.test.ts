/** A fan-out's join (workflows/rail/merge.ts): branch order, the failing branch, the merged package. */
import { describe, expect, it } from 'vitest';
import { MERGE_STAGE, validateHandoff, type FanOutRule, type HandoffV1 } from '../../../contracts';
import { ackRecord } from '../../../workflows/rail/ack';
import { branchFailure, failedBranch, inFanOutOrder, mergeHop, mergeKey, mergedBody, mergedPackage } from '../../../workflows/rail/merge';
import type { HopOutcome } from '../../../workflows/rail/hop';
import type { Branch } from '../../../workflows/rail/routing';
import { INTAKE, TICKET, at, emit, ref } from './helpers';

const rule: FanOutRule = { after: 'intake.v1', fanOut: ['policy', 'account'], merge: 'context.v1', reason: 'research the ticket' };
const hub = at.afterIntake();
const POLICY = ref('chunks.v1', 'b');
const ACCOUNT = ref('account_history.v1', '7');

function answered(stage: string, artifact: typeof POLICY, patch: Partial<HandoffV1> = {}): Branch {
  const pkg = emit(hub, artifact, patch);
  const ack = { ack: 'accepted', stage, hop: 2, reason: 'ok', delivery_key: `j:${stage}:2`, traceparent: hub.trace.traceparent, at: '2026-01-01T00:00:00.000Z' } as const;
  const outcome: HopOutcome = { acks: [ack], package: pkg, result: { package: pkg, artifact, cost_usd: 0.001 }, ok: true, stage, costUsd: 0.001, overspentUsd: 0 };
  return { stage, outcome };
}
function refused(stage: string): Branch {
  const ack = { ack: 'rejected_budget', stage, hop: 2, reason: 'wallet has $0.001; "account" reserves $0.002', delivery_key: `j:${stage}:2`, traceparent: hub.trace.traceparent, at: '2026-01-01T00:00:00.000Z' } as const;
  return { stage, outcome: { acks: [ack], ok: false, stage, costUsd: 0, overspentUsd: 0 } };
}

describe('fan-out join', () => {
  it('orders branches as the fan-out lists them, whatever order they finished in', () => {
    const branches = [answered('account', ACCOUNT), answered('policy', POLICY)];
    expect(inFanOutOrder(rule, branches).map((b) => b.stage)).toEqual(['policy', 'account']);
    expect(mergedBody(rule, branches)).toEqual({ after: 'intake.v1', branches: [{ stage: 'policy', artifact: POLICY }, { stage: 'account', artifact: ACCOUNT }] });
  });

  it('names the first failing branch in fan-out order, with its own refusal', () => {
    const failed = failedBranch(rule, [answered('policy', POLICY), refused('account')]);
    expect(failed?.stage).toBe('account');
    expect(branchFailure(rule, failed!)).toBe('branch "account" of the fan-out after intake.v1 did not answer: rejected_budget: wallet has $0.001; "account" reserves $0.002');
    expect(failedBranch(rule, [answered('policy', POLICY), answered('account', ACCOUNT)])).toBeUndefined();
  });

  it('keys the merge job_id:merge:<artifact_type>', () => {
    expect(mergeKey('job-1', rule)).toBe('job-1:merge:context.v1');
  });

  it('counts each branch as a transfer and puts the merge in the chain after them', () => {
    const hop = mergeHop(hub, rule);
    expect(hop).toMatchObject({ from: 'intake', to: MERGE_STAGE, count: hub.hop!.count + 2 });
    expect(hop.chain.slice(-3)).toEqual(['policy', 'account', MERGE_STAGE]);
  });

  it("builds a valid package with every branch's artifact, tools and questions once, in fan-out order", () => {
    const branches = [
      answered('account', ACCOUNT, { open_questions: [...hub.open_questions, 'which order?'], tools_tried: [...hub.tools_tried, { name: 'crm.read', ok: true }] }),
      answered('policy', POLICY, { open_questions: [...hub.open_questions, 'which order?'], tools_tried: [...hub.tools_tried, { name: 'helpcenter.search', ok: true }] }),
    ];
    const hop = mergeHop(hub, rule);
    const ack = ackRecord({ ack: 'accepted', reason: 'merging' }, { stage: MERGE_STAGE, hop, deliveryKey: mergeKey(hub.job_id, rule), traceparent: hub.trace.traceparent, now: new Date(0) });
    const merged = mergedPackage(hub, rule, branches, hop, ack);
    expect(merged.artifacts).toEqual([TICKET, INTAKE, POLICY, ACCOUNT]);
    expect(merged.tools_tried.map((t) => t.name)).toEqual([...hub.tools_tried.map((t) => t.name), 'helpcenter.search', 'crm.read']);
    expect(merged.open_questions).toEqual([...hub.open_questions, 'which order?']);
    expect(merged.budget).toEqual(hub.budget);
    expect(validateHandoff(merged, { accept: ['handoff.v1'] }).ok).toBe(true);
  });
});
