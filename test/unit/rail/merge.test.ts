/** A fan-out's join (workflows/rail/merge.ts): branch order, the failing branch, the merged package. */
import { describe, expect, it } from 'vitest';
import {
  MERGE_STAGE,
  SUMMARY_SEPARATOR,
  joinSummary,
  referenceSegment,
  splitSummary,
  validateHandoff,
  type FanOutRule,
  type HandoffV1,
} from '../../../contracts';
import { mergeActivities } from '../../../activities/merge';
import { readSummarySegments } from '../../../activities/summary';
import { openStore } from '../../../src/worker/store';
import { ackRecord } from '../../../workflows/rail/ack';
import {
  branchFailure,
  branchesHop,
  branchSegments,
  failedBranch,
  inFanOutOrder,
  mergeHop,
  mergeKey,
  mergedBody,
  mergedPackage,
} from '../../../workflows/rail/merge';
import type { HopOutcome } from '../../../workflows/rail/hop-decisions';
import type { Branch } from '../../../workflows/rail/routing';
import { HUMAN, nextHop } from '../../../workflows/rail/hop-chain';
import { INTAKE, TICKET, at, emit, ref } from './helpers';

const rule: FanOutRule = {
  after: 'intake.v1',
  fanOut: ['policy', 'account'],
  merge: 'context.v1',
  reason: 'research the ticket',
};
const hub = at.afterIntake();
const POLICY = ref('chunks.v1', 'b');
const ACCOUNT = ref('account_history.v1', '7');

function answered(stage: string, artifact: typeof POLICY, patch: Partial<HandoffV1> = {}): Branch {
  const pkg = emit(hub, artifact, patch);
  const ack = {
    ack: 'accepted',
    stage,
    hop: 2,
    reason: 'ok',
    delivery_key: `j:${stage}:2`,
    traceparent: hub.trace.traceparent,
    at: '2026-01-01T00:00:00.000Z',
  } as const;
  const outcome: HopOutcome = {
    acks: [ack],
    package: pkg,
    result: { package: pkg, artifact, cost_usd: 0.001 },
    ok: true,
    stage,
    costUsd: 0.001,
    overspentUsd: 0,
  };
  return { stage, outcome };
}
function refused(stage: string): Branch {
  const ack = {
    ack: 'rejected_budget',
    stage,
    hop: 2,
    reason: 'wallet has $0.001; "account" reserves $0.002',
    delivery_key: `j:${stage}:2`,
    traceparent: hub.trace.traceparent,
    at: '2026-01-01T00:00:00.000Z',
  } as const;
  return { stage, outcome: { acks: [ack], ok: false, stage, costUsd: 0, overspentUsd: 0 } };
}

describe('fan-out join', () => {
  it('orders branches as the fan-out lists them, whatever order they finished in', () => {
    const branches = [answered('account', ACCOUNT), answered('policy', POLICY)];
    expect(inFanOutOrder(rule, branches).map((b) => b.stage)).toEqual(['policy', 'account']);
    expect(mergedBody(rule, branches)).toEqual({
      after: 'intake.v1',
      branches: [
        { stage: 'policy', artifact: POLICY },
        { stage: 'account', artifact: ACCOUNT },
      ],
    });
  });

  it('names the first failing branch in fan-out order, with its own refusal', () => {
    const failed = failedBranch(rule, [answered('policy', POLICY), refused('account')]);
    expect(failed?.stage).toBe('account');
    expect(branchFailure(rule, failed!)).toBe(
      'branch "account" of the fan-out after intake.v1 did not answer: rejected_budget: wallet has $0.001; "account" reserves $0.002',
    );
    expect(failedBranch(rule, [answered('policy', POLICY), answered('account', ACCOUNT)])).toBeUndefined();
  });

  it("carries the branches' own memory refs once, and none of their log refs (the merge joins the log)", () => {
    const log = (sha: string) => `handrail://transcripts/${hub.job_id}/${sha.repeat(64)}`;
    const base = { ...hub, memory_refs: ['kb://shared', log('0')] };
    const withRefs = (stage: string, artifact: typeof POLICY, refs: string[]): Branch => {
      const b = answered(stage, artifact);
      const pkg = { ...b.outcome.result!.package, memory_refs: refs };
      return { stage, outcome: { ...b.outcome, result: { ...b.outcome.result!, package: pkg } } };
    };
    const hop = mergeHop(base.hop, rule);
    const ack = ackRecord(
      { ack: 'accepted', reason: 'merging' },
      {
        stage: MERGE_STAGE,
        hop,
        deliveryKey: mergeKey(base.job_id, rule),
        traceparent: base.trace.traceparent,
        now: new Date(0),
      },
    );
    const merged = mergedPackage(
      base,
      rule,
      [
        withRefs('policy', POLICY, ['kb://shared', log('a')]),
        withRefs('account', ACCOUNT, ['kb://shared', 'crm://cus_9', log('b')]),
      ],
      hop,
      ack,
    );
    expect(merged.memory_refs).toEqual(['kb://shared', log('0'), 'crm://cus_9']);
  });

  it('keys the merge job_id:merge:<artifact_type>', () => {
    expect(mergeKey('job-1', rule)).toBe('job-1:merge:context.v1');
  });

  it('counts each branch as a transfer and puts the merge in the chain after them', () => {
    const hop = mergeHop(hub.hop, rule);
    expect(hop).toMatchObject({ from: 'intake', to: MERGE_STAGE, count: hub.hop!.count + 2 });
    expect(hop.chain.slice(-3)).toEqual(['policy', 'account', MERGE_STAGE]);
  });

  it('a human after a refused branch follows the branches that answered, at their hop; the merge lists each stage once, in order', () => {
    const after = branchesHop(hub.hop, hub.hop, ['policy'])!;
    expect(after).toMatchObject({ to: 'policy', count: hub.hop!.count + 1 });
    expect(after.chain.slice(-2)).toEqual(['intake', 'policy']);
    const human = nextHop(after, HUMAN, 'branch refused', undefined, 'escalation');
    expect(human.count).toBe(hub.hop!.count + 1);
    // Escalated twice: the branch already listed is not listed again.
    expect(branchesHop(hub.hop, human, ['policy'])!.chain.slice(-2)).toEqual(['policy', HUMAN]);
    const merged = mergeHop(hub.hop, rule, human);
    expect(merged.count).toBe(hub.hop!.count + 2);
    expect(merged.chain.slice(-5)).toEqual(['intake', 'policy', HUMAN, 'account', MERGE_STAGE]);
  });

  it("builds a valid package with every branch's artifact, tools and questions once, in fan-out order", () => {
    const branches = [
      answered('account', ACCOUNT, {
        open_questions: [...hub.open_questions, 'which order?'],
        tools_tried: [...hub.tools_tried, { name: 'crm.read', ok: true }],
      }),
      answered('policy', POLICY, {
        open_questions: [...hub.open_questions, 'which order?'],
        tools_tried: [...hub.tools_tried, { name: 'helpcenter.search', ok: true }],
      }),
    ];
    const hop = mergeHop(hub.hop, rule);
    const ack = ackRecord(
      { ack: 'accepted', reason: 'merging' },
      {
        stage: MERGE_STAGE,
        hop,
        deliveryKey: mergeKey(hub.job_id, rule),
        traceparent: hub.trace.traceparent,
        now: new Date(0),
      },
    );
    const merged = mergedPackage(hub, rule, branches, hop, ack);
    expect(merged.artifacts).toEqual([TICKET, INTAKE, POLICY, ACCOUNT]);
    expect(merged.tools_tried.map((t) => t.name)).toEqual([
      ...hub.tools_tried.map((t) => t.name),
      'helpcenter.search',
      'crm.read',
    ]);
    expect(merged.open_questions).toEqual([...hub.open_questions, 'which order?']);
    expect(merged.budget).toEqual(hub.budget);
    expect(validateHandoff(merged, { accept: ['handoff.v1'] }).ok).toBe(true);
  });
});

describe('fan-out join: the summary', () => {
  const POLICY_SEGMENT = 'hop 2 policy → chunks.v1: 3 chunks: refund-policy.2, refund-policy.4, refund-policy.1';
  const ACCOUNT_SEGMENT =
    'hop 2 account → account_history.v1: 2 earlier tickets of customer cus_9: tkt_100 triaged, tkt_101 needs_human';
  const withSegment = (segment: string) => ({ summary: `${hub.summary!}${SUMMARY_SEPARATOR}${segment}` });

  it("takes each branch's own segment in the fan-out's order, whatever order they finished in; a refused branch adds none", () => {
    const branches = [
      answered('account', ACCOUNT, withSegment(ACCOUNT_SEGMENT)),
      answered('policy', POLICY, withSegment(POLICY_SEGMENT)),
    ];
    expect(branchSegments(hub, rule, branches)).toEqual([POLICY_SEGMENT, ACCOUNT_SEGMENT]);
    expect(
      branchSegments(hub, rule, [answered('policy', POLICY, withSegment(POLICY_SEGMENT)), refused('account')]),
    ).toEqual([POLICY_SEGMENT]);
  });

  it('a branch that moved earlier segments to the store contributes its newest segment', () => {
    const offloaded = { summary: joinSummary([referenceSegment('9'.repeat(64), 1), ACCOUNT_SEGMENT]) };
    expect(
      branchSegments(hub, rule, [
        answered('policy', POLICY, withSegment(POLICY_SEGMENT)),
        answered('account', ACCOUNT, offloaded),
      ]),
    ).toEqual([POLICY_SEGMENT, ACCOUNT_SEGMENT]);
  });

  it('the merge activity appends them to the hub summary, moving the oldest to the store past the cap with nothing lost', async () => {
    const store = await openStore({ sqlitePath: ':memory:' });
    try {
      const { mergeBranches } = mergeActivities(store);
      const body = {
        after: rule.after,
        branches: [
          { stage: 'policy', artifact: POLICY },
          { stage: 'account', artifact: ACCOUNT },
        ],
      };
      const merged = await mergeBranches({
        key: 'j:merge:context.v1',
        type: 'context.v1',
        body,
        package: hub,
        segments: [POLICY_SEGMENT, ACCOUNT_SEGMENT],
      });
      expect(merged.package.summary).toBe(joinSummary([hub.summary!, POLICY_SEGMENT, ACCOUNT_SEGMENT]));

      const full = {
        ...hub,
        summary: joinSummary(Array.from({ length: 19 }, (_, n) => `hop ${n} s → t.v1: ${'x'.repeat(390)}`)),
      };
      expect(validateHandoff(full, { accept: ['handoff.v1'] }).ok).toBe(true);
      const over = await mergeBranches({
        key: 'j2:merge:context.v1',
        type: 'context.v1',
        body,
        package: full,
        segments: [POLICY_SEGMENT, ACCOUNT_SEGMENT],
      });
      expect(splitSummary(over.package.summary)[0]).toMatch(
        /^\[earlier hops: handrail:\/\/summaries\/[0-9a-f]{64} \(\d+ segments?\)\]$/,
      );
      expect(splitSummary(over.package.summary).slice(-2)).toEqual([POLICY_SEGMENT, ACCOUNT_SEGMENT]);
      expect(validateHandoff(over.package, { accept: ['handoff.v1'] }).ok).toBe(true);
      expect(await readSummarySegments(store, over.package.summary)).toEqual([
        ...splitSummary(full.summary),
        POLICY_SEGMENT,
        ACCOUNT_SEGMENT,
      ]);
    } finally {
      await store.close();
    }
  });
});
