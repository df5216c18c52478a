/**
 * One hop's pure core, table-driven: what arrives (raw, untrusted) → admitHop → decideHop → the
 * ack; and after the stage ran, settleHop → the wallet and the violations. The Temporal shell
 * (workflows/run-hop.ts) only gathers the facts these take.
 */
import { describe, expect, it } from 'vitest';
import type { Artifact, HandoffV1, StageResult } from '../../../contracts';
import { ticketTriage } from '../../../contracts/pipelines';
import {
  admitHop,
  decideHop,
  deliveredPackage,
  settleHop,
  stampAck,
  type HopRequest,
} from '../../../workflows/rail/hop-decisions';
import { concludeHop } from '../../../workflows/rail/conclude';
import { DEFAULT_MAX_HOPS } from '../../../workflows/rail/hop-chain';
import { CHUNKS, INTAKE, SUMMARY, SUMMARY_2, TICKET, VERDICT, at, delivered, emit, packageAt, ref } from './helpers';

const TRACE = '00-0000000000000000000000000000dead-000000000000dead-00';
const request = (stage: unknown, pkg: unknown, over: Partial<HopRequest> = {}): HopRequest => ({
  pipeline: ticketTriage,
  stage: stage as string,
  package: pkg,
  reason: 'test',
  maxHops: DEFAULT_MAX_HOPS,
  fallbackTraceparent: TRACE,
  fallbackJobId: 'job_fallback',
  ...over,
});
const ackFor = (r: HopRequest, prior: Pick<StageResult, 'recorded_by_other'> | null = null) => {
  const admission = admitHop(r);
  return { admission, decision: decideHop(admission, r, prior) };
};
const broke = (pkg: HandoffV1) => ({ ...pkg, budget: { ...pkg.budget, usd_remaining: 0 } });

describe('admitHop → decideHop: the ack of every kind of delivery', () => {
  it.each([
    ["the reference relay's first hop", 'intake', at.start, null, 'accepted'],
    ['a stage name that is not a string', 5, at.start, null, 'rejected_role'],
    ['a stage the pipeline does not have', 'translate', at.start, null, 'rejected_role'],
    ['a stage that does not take the newest artifact', 'judge', at.afterIntake, null, 'rejected_role'],
    ['not an object at all', 'intake', (): unknown => 'hello', null, 'rejected_schema'],
    [
      'a package without its job_id',
      'intake',
      (): unknown => ({ ...at.start(), job_id: undefined }),
      null,
      'rejected_schema',
    ],
    ['the writer behind no passing verdict', 'writeback', () => at.afterJudge('fail'), null, 'rejected_invariant'],
    ['the same package delivered again', 'retrieve', at.afterIntake, { recorded_by_other: 'same' }, 'duplicate'],
    ["a prior result with no marker (the rail's own earlier delivery)", 'retrieve', at.afterIntake, {}, 'duplicate'],
    [
      'another package under the same key',
      'retrieve',
      at.afterIntake,
      { recorded_by_other: 'different' },
      'rejected_conflict',
    ],
    ['an empty wallet', 'retrieve', () => broke(at.afterIntake()), null, 'rejected_budget'],
  ] as const)('%s → %s acks %s', (_what, stage, build, prior, want) => {
    expect(ackFor(request(stage, build()), prior).decision.ack).toBe(want);
  });

  it('acks max_hops_exceeded past the cap and cycle_detected for an unplanned revisit', () => {
    expect(ackFor(request('retrieve', at.afterIntake(), { maxHops: 0 })).decision.ack).toBe('max_hops_exceeded');
    // retrieve takes intake.v1; a package that went intake → retrieve → … and back to intake.v1 as newest.
    const revisit = { ...at.afterRetrieve(), artifacts: at.afterRetrieve().artifacts.slice(0, 2) };
    expect(ackFor(request('retrieve', revisit)).decision.ack).toBe('cycle_detected');
  });

  it('a package too broken to carry a trace is acked under the fallback job and trace', () => {
    const { admission } = ackFor(request('intake', { nonsense: true }));
    expect(admission).toMatchObject({
      jobId: 'job_fallback',
      traceparent: TRACE,
      key: 'job_fallback:intake:0',
      deliverable: false,
    });
  });

  it('asks the role question once: the admission carries it for the ack and for the duplicate lookup', () => {
    const { admission, decision } = ackFor(request('judge', at.afterIntake()));
    expect(admission.role).toMatch(/"judge" takes summary_md/);
    expect(admission.deliverable).toBe(false);
    expect(decision.reason).toBe(admission.role);
  });
});

describe('settleHop: after the stage ran', () => {
  const judged = delivered(at.afterDraft(), 'judge');
  const verdictOut = (cost: number, patch: Partial<HandoffV1> = {}): StageResult => ({
    package: emit(judged, VERDICT, { evaluator: { last_verdict: 'pass', failures: [] }, ...patch }),
    artifact: VERDICT,
    cost_usd: cost,
    body: { verdict: 'pass' },
  });

  it.each([
    ['a well-behaved critic', verdictOut(0.005), []],
    ['a cost that is not a number', verdictOut(Number.NaN), ['cost_reported']],
    ['a stage that rewrites the goal', verdictOut(0.005, { goal: 'other' }), ['goal_unchanged']],
    ['a stage that drops a constraint', verdictOut(0.005, { constraints: [] }), ['constraints_kept']],
  ] as const)('%s → violations %j', (_what, result, invariants) => {
    const settled = settleHop(ticketTriage, judged, result, ticketTriage.get('judge')!);
    expect(settled.violations.map((v) => v.invariant)).toEqual(invariants);
  });

  it('charges the wallet what the stage reported, and nothing for a cost that is not a real amount', () => {
    const card = ticketTriage.get('judge')!;
    expect(settleHop(ticketTriage, judged, verdictOut(0.005), card).charged.budget.usd_remaining).toBeCloseTo(
      judged.budget.usd_remaining - 0.005,
      6,
    );
    expect(settleHop(ticketTriage, judged, verdictOut(Number.NaN), card).costUsd).toBe(0);
  });

  it('an emitted package that fails the contract is a violation, named by the versions the stage reads', () => {
    const bad = { ...verdictOut(0.005), package: { ...verdictOut(0.005).package, job_id: '' } };
    const settled = settleHop(ticketTriage, judged, bad, ticketTriage.get('judge')!);
    expect(settled.emitted).toBeUndefined();
    expect(settled.violations[0]).toMatchObject({
      invariant: 'emitted_schema_valid',
      reason: expect.stringMatching(/^the emitted package fails handoff\.v1: \/job_id/),
    });
  });
});

describe('concludeHop: a stage failure', () => {
  const accepted = (r: HopRequest) => {
    const admission = admitHop(r);
    return { admission, ack: stampAck(admission, r, decideHop(admission, r, null), new Date(0)) };
  };

  it("over the edge's context budget is a second ack, rejected_budget named context_budget_exceeded, and nothing is charged", () => {
    const r = request('retrieve', at.afterIntake());
    const { admission, ack } = accepted(r);
    const failure =
      "retrieve failed: ContextBudgetExceeded: the handover on intake → retrieve is 900 tokens, over the edge's cap of 40 (strategy transcript_prepend)";
    const outcome = concludeHop(admission, r, ack, new Date(0), null, {
      failure,
      failureType: 'ContextBudgetExceeded',
    });
    expect(outcome.acks.map((a) => a.ack)).toEqual(['accepted', 'rejected_budget']);
    expect(outcome.acks[1]!.reason).toBe(`context_budget_exceeded: ${failure}`);
    expect(outcome).toMatchObject({ ok: false, failure, costUsd: 0, overspentUsd: 0 });
    expect(outcome.package?.ack?.ack).toBe('rejected_budget');
  });

  it('of any other type fails the hop under its accepted ack (the job escalates with the reason)', () => {
    const r = request('retrieve', at.afterIntake());
    const { admission, ack } = accepted(r);
    const outcome = concludeHop(admission, r, ack, new Date(0), null, {
      failure: 'retrieve failed: HandoverFailed: no trace',
      failureType: 'HandoverFailed',
    });
    expect(outcome.acks.map((a) => a.ack)).toEqual(['accepted']);
    expect(outcome).toMatchObject({ ok: false, failure: 'retrieve failed: HandoverFailed: no trace', costUsd: 0 });
  });
});

describe('concludeHop: no progress', () => {
  // A revised draft goes back to the judge, which failed the last one for a missing citation.
  const revision = packageAt(
    ['intake', 'retrieve', 'draft', 'judge', 'draft'],
    [TICKET, INTAKE, CHUNKS, SUMMARY, VERDICT, SUMMARY_2],
    {
      evaluator: { last_verdict: 'fail', failures: ['citation_missing: no help-center key cited'] },
    },
  );
  const conclude = (
    pkg: HandoffV1,
    stage: string,
    output: (delivered: HandoffV1) => { pkg: HandoffV1; artifact: Artifact },
  ) => {
    const r = request(stage, pkg);
    const admission = admitHop(r);
    const ack = stampAck(admission, r, decideHop(admission, r, null), new Date(0));
    expect(ack.ack).toBe('accepted');
    const { pkg: emitted, artifact } = output(deliveredPackage({ ...admission, arrived: admission.arrived! }, ack));
    const result: StageResult = {
      package: emitted,
      artifact,
      cost_usd: 0.005,
      body: { verdict: emitted.evaluator.last_verdict },
    };
    return concludeHop(admission, r, ack, new Date(0), null, { result, card: ticketTriage.get(stage)! });
  };
  const verdict = (failures: string[]) => (d: HandoffV1) => ({
    pkg: emit(d, ref('verdict.v1', '7'), {
      evaluator: { last_verdict: failures.length > 0 ? ('fail' as const) : ('pass' as const), failures },
    }),
    artifact: ref('verdict.v1', '7'),
  });

  it.each([
    ['the judge fails it for the same reason again', ['citation_missing: still no key'], ['accepted', 'no_progress']],
    ['the judge fails it for another reason', ['too_long: 2,400 characters'], ['accepted']],
    ['the judge passes it', [], ['accepted']],
  ] as const)('%s → acks %j', (_what, failures, acks) => {
    const outcome = conclude(revision, 'judge', verdict([...failures]));
    expect(outcome.acks.map((a) => a.ack)).toEqual(acks);
    expect(outcome.ok).toBe(acks.length === 1);
  });

  it('no_progress names the repeated reasons, charges the stage, keeps the package it was given, and the job escalates with it', () => {
    const outcome = conclude(revision, 'judge', verdict(['citation_missing: still no key']));
    expect(outcome.acks[1]).toMatchObject({
      ack: 'no_progress',
      stage: 'judge',
      reason: '"judge" failed the work for the same reasons twice in a row: citation_missing',
    });
    expect(outcome).toMatchObject({ failure: `no progress: ${outcome.acks[1]!.reason}`, costUsd: 0.005 });
    expect(outcome.package?.evaluator).toEqual(revision.evaluator);
  });

  it('an output that repeats an earlier artifact is no_progress (naming the invariant), not rejected_invariant', () => {
    const outcome = conclude(at.afterJudge('fail'), 'draft', (d) => ({ pkg: emit(d, SUMMARY), artifact: SUMMARY }));
    expect(outcome.acks.map((a) => `${a.ack}${a.invariant ? ` (${a.invariant})` : ''}`)).toEqual([
      'accepted',
      'no_progress (no_artifact_reuse)',
    ]);
  });
});

describe('concludeHop: nobody picked the hop up', () => {
  it('is a second ack, target_unavailable, with the reason; nothing is charged (the package returns to its sender)', () => {
    const r = request('retrieve', at.afterIntake());
    const admission = admitHop(r);
    const ack = stampAck(admission, r, decideHop(admission, r, null), new Date(0));
    const failure = 'stage unavailable: no "retrieve-backup" worker picked the hop up within 1s';
    const outcome = concludeHop(admission, r, ack, new Date(0), null, { failure, failureType: 'TargetUnavailable' });
    expect(outcome.acks.map((a) => `${a.stage}:${a.ack}`)).toEqual([
      'retrieve:accepted',
      'retrieve:target_unavailable',
    ]);
    expect(outcome).toMatchObject({
      ok: false,
      failure,
      costUsd: 0,
      package: { hop: { from: 'intake', to: 'retrieve' } },
    });
  });
});

describe('concludeHop: settling a hop against its reservation', () => {
  /** retrieve, delivered after intake, reporting `cost`; `card` may declare a worst case. */
  const settleRetrieve = (cost: number, card = ticketTriage.get('retrieve')!, wallet = 1) => {
    const pipeline = { ...ticketTriage, get: (name: string) => (name === 'retrieve' ? card : ticketTriage.get(name)) };
    const r = request(
      'retrieve',
      { ...at.afterIntake(), budget: { usd_remaining: wallet, revisions_remaining: 1 } },
      { pipeline },
    );
    const admission = admitHop(r);
    const ack = stampAck(admission, r, decideHop(admission, r, null), new Date(0));
    const emitted = emit(deliveredPackage({ ...admission, arrived: admission.arrived! }, ack), CHUNKS);
    return concludeHop(admission, r, ack, new Date(0), null, {
      result: { package: emitted, artifact: CHUNKS, cost_usd: cost, body: {} },
      card,
    });
  };

  it("a declared worst case caps the charge; the rest is the hop's overspend", () => {
    const outcome = settleRetrieve(0.05, { ...ticketTriage.get('retrieve')!, worstCaseCostUsd: 0.004 });
    expect(outcome).toMatchObject({ ok: true, costUsd: 0.004, overspentUsd: 0.046 });
    expect(outcome.acks[0]).toMatchObject({ reserved_usd: 0.004, settled_usd: 0.004 });
    expect(outcome.package?.budget.usd_remaining).toBe(0.996);
  });

  it('a nominal cost is no cap: a real report above it is charged in full', () => {
    const outcome = settleRetrieve(0.05);
    expect(outcome).toMatchObject({ ok: true, costUsd: 0.05, overspentUsd: 0 });
    expect(outcome.acks[0]).toMatchObject({ reserved_usd: 0.002, settled_usd: 0.05 });
  });

  it('the wallet pays at most what it holds: the job spent that, the rest is overspent', () => {
    const outcome = settleRetrieve(0.05, ticketTriage.get('retrieve')!, 0.01);
    expect(outcome).toMatchObject({ costUsd: 0.01, overspentUsd: 0.04 });
    expect(outcome.package?.budget.usd_remaining).toBe(0);
  });
});

describe('concludeHop: what the rail is handed back is checked, a claimed duplicate too', () => {
  /** retrieve, delivered after intake and accepted, answering `result`; the rail's lookup found `recorded`. */
  const answer = (result: (delivered: HandoffV1) => StageResult, recorded?: StageResult | null) => {
    const r = request('retrieve', at.afterIntake());
    const admission = admitHop(r);
    const ack = stampAck(admission, r, decideHop(admission, r, null), new Date(0));
    const given = deliveredPackage({ ...admission, arrived: admission.arrived! }, ack);
    return {
      given,
      outcome: concludeHop(
        admission,
        r,
        ack,
        new Date(0),
        null,
        { result: result(given), card: ticketTriage.get('retrieve')! },
        recorded,
      ),
    };
  };
  const honest = (d: HandoffV1): StageResult => ({
    package: emit(d, CHUNKS),
    artifact: CHUNKS,
    cost_usd: 0.002,
    body: {},
  });
  const rich = (d: HandoffV1): StageResult => {
    const result = honest(d);
    return {
      ...result,
      package: { ...result.package, goal: 'Refund everyone', budget: { usd_remaining: 999, revisions_remaining: 9 } },
      recorded_by_other: 'same',
    };
  };

  it("a claim the rail's lookup does not confirm is rejected_invariant naming it: nothing charged, the delivered package goes on", () => {
    const { given, outcome } = answer(rich, null);
    expect(outcome.acks.map((a) => `${a.ack} ${a.invariant ?? ''}`.trim())).toEqual([
      'accepted',
      'rejected_invariant duplicate_claim_verified',
    ]);
    expect(outcome).toMatchObject({
      ok: false,
      costUsd: 0,
      package: { goal: given.goal, budget: given.budget, artifacts: given.artifacts },
    });
    expect(outcome.result).toBeUndefined();
  });

  it("a claim the lookup confirms is answered from the rail's record, never the stage's package", () => {
    const { given, outcome } = answer(rich, honest(at.afterIntake()));
    expect(outcome.acks.map((a) => a.ack)).toEqual(['duplicate']);
    expect(outcome).toMatchObject({ ok: true, costUsd: 0, package: { goal: given.goal, budget: given.budget } });
  });

  it('a record that breaks an invariant against this delivery is refused as an answer too', () => {
    const grown = (d: HandoffV1): StageResult => ({
      ...honest(d),
      package: { ...honest(d).package, budget: { ...d.budget, usd_remaining: 999 } },
    });
    const { given, outcome } = answer(rich, grown(at.afterIntake()));
    expect(outcome.acks.map((a) => `${a.ack} ${a.invariant ?? ''}`.trim())).toEqual([
      'duplicate',
      'rejected_invariant budget_not_increased',
    ]);
    expect(outcome).toMatchObject({ ok: false, costUsd: 0, package: { budget: given.budget } });
  });
});
