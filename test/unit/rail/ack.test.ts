import { describe, expect, it } from 'vitest';
import { AckRecord, HANDOFF_V1, defineStage } from '../../../contracts';
import { newestArtifact, roleMismatch } from '../../../contracts';
import { ackRecord, decideAck, type AckFacts } from '../../../workflows/rail/ack';
import { DEFAULT_MAX_HOPS, HUMAN, deliveryKey, nextHop } from '../../../workflows/rail/hop-chain';
import {
  CHUNKS,
  INTAKE,
  SUMMARY,
  SUMMARY_2,
  VERDICT,
  at,
  card,
  factsFor,
  fixturePackage,
  manifest,
  packageAt,
  rawFixture,
  relayHop,
  VALID_FILE,
  TICKET,
} from './helpers';

const ackOf = (f: AckFacts) => decideAck(f).ack;

describe('decideAck: accepted', () => {
  it('accepts each stage of the planned relay with its own input artifact', () => {
    expect(ackOf(factsFor(at.start(), 'intake'))).toBe('accepted');
    expect(ackOf(factsFor(at.afterIntake(), 'retrieve'))).toBe('accepted');
    expect(ackOf(factsFor(at.afterRetrieve(), 'draft'))).toBe('accepted');
    expect(ackOf(factsFor(at.afterDraft(), 'judge'))).toBe('accepted');
    expect(ackOf(factsFor(at.afterJudge('pass'), 'writeback'))).toBe('accepted');
  });

  it("accepts a draft revision after a failing verdict (verdict.v1 is the drafter's revision input)", () => {
    expect(ackOf(factsFor(at.afterJudge('fail'), 'draft'))).toBe('accepted');
  });
});

describe('decideAck against the fixture manifest', () => {
  const railed = manifest.packages.filter((p) => p.rail && p.rail !== 'rejected_invariant');
  it('names at least the accepted, duplicate and rejected_budget fixtures', () => {
    expect(railed.map((p) => p.rail)).toEqual(expect.arrayContaining(['accepted', 'duplicate', 'rejected_budget']));
  });

  // These fixtures hold a summary_md: the judge is the stage they go to.
  it.each(railed)('$file delivered to the judge acks $rail', ({ file, rail }) => {
    const facts = factsFor(rawFixture(file), 'judge', { alreadyDelivered: rail === 'duplicate' });
    expect(ackOf(facts)).toBe(rail);
  });

  const rejected = manifest.packages.filter((p) => p.expect === 'reject');
  const words = { schema: 'schema invalid', version: 'unsupported version', size: 'package too large' } as const;
  it.each(rejected)('$file acks rejected_schema ($reason) naming $path', ({ file, reason, path }) => {
    const d = decideAck(factsFor(rawFixture(file), 'judge'));
    expect(d.ack).toBe('rejected_schema');
    expect(d.reason.startsWith(`${words[reason!]}: `)).toBe(true);
    expect(d.errors?.map((e) => e.path)).toContain(path);
  });

  it('covers the version and the size reasons, not only schema', () => {
    expect(new Set(rejected.map((p) => p.reason))).toEqual(new Set(['schema', 'version', 'size']));
  });
});

describe('decideAck: rejected_schema', () => {
  it('rejects a valid package with a required field removed', () => {
    const { goal: _goal, ...noGoal } = fixturePackage();
    const d = decideAck(factsFor(noGoal, 'judge'));
    expect(d).toMatchObject({ ack: 'rejected_schema', errors: [{ path: '/goal', message: 'is required' }] });
  });

  it('rejects a negative wallet as a schema error, not as a budget one', () => {
    const pkg = { ...fixturePackage(), budget: { usd_remaining: -1, revisions_remaining: 0 } };
    expect(ackOf(factsFor(pkg, 'judge'))).toBe('rejected_schema');
  });

  it('summarises at most three errors in the reason and counts the rest', () => {
    const pkg = { ...fixturePackage() } as Record<string, unknown>;
    for (const f of ['goal', 'constraints', 'artifacts', 'open_questions', 'tools_tried']) delete pkg[f];
    const d = decideAck(factsFor(pkg, 'judge'));
    expect(d.ack).toBe('rejected_schema');
    expect(d.errors!.length).toBeGreaterThanOrEqual(5);
    expect(d.reason).toContain(`(+${d.errors!.length - 3} more)`);
  });
});

describe('decideAck: rejected_role', () => {
  it('rejects a stage no card is registered for', () => {
    const d = decideAck(factsFor(at.afterDraft(), 'summarize'));
    expect(d.ack).toBe('rejected_role');
    expect(d.reason).toContain('"summarize"');
  });

  it.each([
    ['intake', at.afterIntake],
    ['retrieve', at.afterRetrieve],
    ['draft', at.afterDraft],
    ['judge', at.afterIntake],
    ['writeback', at.afterDraft],
  ] as const)('rejects %s when the newest artifact is not a type it takes', (stage, build) => {
    const pkg = build();
    const d = decideAck(factsFor(pkg, stage));
    expect(d.ack).toBe('rejected_role');
    expect(d.reason).toContain(`newest artifact is ${newestArtifact(pkg)!.type}`);
  });

  it('reads the newest artifact, not any artifact: the judge does not take a package whose summary is older', () => {
    const pkg = packageAt(['intake', 'retrieve', 'draft', 'judge'], [INTAKE, CHUNKS, SUMMARY, VERDICT]);
    expect(ackOf(factsFor(pkg, 'judge'))).toBe('rejected_role');
  });

  it('rejects a package with no artifacts at all', () => {
    const pkg = packageAt([], []);
    const d = decideAck(factsFor(pkg, 'intake'));
    expect(d).toMatchObject({ ack: 'rejected_role' });
    expect(d.reason).toContain('missing');
  });

  it('rejects a package version the card does not read', () => {
    const v2Only = defineStage({ ...card('judge'), name: 'judge', packageVersions: ['handoff.v2'] });
    expect(roleMismatch(v2Only, at.afterDraft())).toMatch(/reads handoff\.v2, not handoff\.v1/);
    expect(roleMismatch(card('judge'), at.afterDraft())).toBeNull();
  });
});

describe('decideAck: rejected_invariant writeback_requires_pass', () => {
  it.each(['fail', 'none'] as const)('refuses the writer when the last verdict is %s', (verdict) => {
    const pkg = { ...at.afterJudge('pass'), evaluator: { last_verdict: verdict, failures: [] } };
    const d = decideAck(factsFor(pkg, 'writeback'));
    expect(d).toMatchObject({ ack: 'rejected_invariant', invariant: 'writeback_requires_pass' });
    expect(d.reason).toContain(`last verdict: ${verdict}`);
  });

  it('lets the writer run behind a passing verdict', () => {
    expect(decideAck(factsFor(at.afterJudge('pass'), 'writeback'))).toMatchObject({ ack: 'accepted' });
  });

  it('gates only the writer: a non-writing stage runs after a fail', () => {
    expect(card('draft').writes).toBeNull();
    expect(ackOf(factsFor(at.afterJudge('fail'), 'draft'))).toBe('accepted');
  });
});

describe('decideAck: duplicate', () => {
  it('acks a delivery that already completed as duplicate', () => {
    const d = decideAck(factsFor(at.afterDraft(), 'judge', { alreadyDelivered: true }));
    expect(d.ack).toBe('duplicate');
  });

  it('answers a duplicate even when the wallet is now empty (answering costs nothing)', () => {
    const pkg = { ...at.afterDraft(), budget: { usd_remaining: 0, revisions_remaining: 0 } };
    expect(ackOf(factsFor(pkg, 'judge', { alreadyDelivered: true }))).toBe('duplicate');
    expect(ackOf(factsFor(pkg, 'judge', { alreadyDelivered: false }))).toBe('rejected_budget');
  });
});

describe('decideAck: max_hops_exceeded', () => {
  // The planned relay with two revisions is exactly the default cap of 8 transfers.
  const twoRevisions = ['intake', 'retrieve', 'draft', 'judge', 'draft', 'judge', 'draft', 'judge'];
  const passed = () =>
    packageAt(twoRevisions, [TICKET, INTAKE, CHUNKS, SUMMARY, VERDICT], {
      evaluator: { last_verdict: 'pass', failures: [] },
    });
  const failed = () =>
    packageAt(twoRevisions, [TICKET, INTAKE, CHUNKS, SUMMARY, VERDICT], {
      evaluator: { last_verdict: 'fail', failures: ['x'] },
    });

  it('accepts the last allowed hop: writeback as transfer 8 of 8', () => {
    const facts = factsFor(passed(), 'writeback');
    expect(facts.hop.count).toBe(DEFAULT_MAX_HOPS);
    expect(ackOf(facts)).toBe('accepted');
  });

  it('refuses one transfer past the cap', () => {
    const facts = factsFor(passed(), 'writeback', { maxHops: DEFAULT_MAX_HOPS - 1 });
    const d = decideAck(facts);
    expect(d.ack).toBe('max_hops_exceeded');
    expect(d.reason).toContain(`transfer ${DEFAULT_MAX_HOPS} exceeds the cap of ${DEFAULT_MAX_HOPS - 1}`);
  });

  it('allows a third revision to start at the cap (judge → draft is transfer 8) and refuses its judging (transfer 9)', () => {
    const toDraft = factsFor(failed(), 'draft');
    expect(toDraft.hop.count).toBe(DEFAULT_MAX_HOPS);
    expect(ackOf(toDraft)).toBe('accepted');
    const drafted = packageAt([...twoRevisions, 'draft'], [TICKET, INTAKE, CHUNKS, SUMMARY, VERDICT, SUMMARY_2]);
    const toJudge = factsFor(drafted, 'judge');
    expect(toJudge.hop.count).toBe(DEFAULT_MAX_HOPS + 1);
    expect(ackOf(toJudge)).toBe('max_hops_exceeded');
  });

  it('gives a fresh allowance after a human decision: transfer 9 is accepted when a human sent work on at 8', () => {
    // draft holds it at transfer 8, escalates; the human sends it back to draft (no transfer); draft → judge is 9.
    let hop = relayHop([...twoRevisions, 'draft'])!;
    hop = nextHop(hop, HUMAN, 'escalated');
    hop = nextHop(hop, 'draft', 'revise', HUMAN);
    expect(hop.count).toBe(8);
    const pkg = packageAt([], [TICKET, INTAKE, CHUNKS, SUMMARY, VERDICT, SUMMARY_2], { hop });
    const facts = factsFor(pkg, 'judge');
    expect(facts.hop.count).toBe(9);
    expect(ackOf(facts)).toBe('max_hops_exceeded');
    expect(ackOf({ ...facts, countAtLastHumanDecision: 8 })).toBe('accepted');
    // the fresh allowance is the cap again, not unlimited
    expect(ackOf({ ...facts, hop: { ...facts.hop, count: 8 + DEFAULT_MAX_HOPS }, countAtLastHumanDecision: 8 })).toBe(
      'accepted',
    );
    expect(ackOf({ ...facts, hop: { ...facts.hop, count: 9 + DEFAULT_MAX_HOPS }, countAtLastHumanDecision: 8 })).toBe(
      'max_hops_exceeded',
    );
  });
});

describe('decideAck: cycle_detected', () => {
  it('detects draft → retrieve → draft as a cycle', () => {
    const pkg = packageAt(['intake', 'retrieve', 'draft', 'retrieve'], [TICKET, INTAKE, CHUNKS]);
    const d = decideAck(factsFor(pkg, 'draft'));
    expect(d.ack).toBe('cycle_detected');
    expect(d.reason).toContain('retrieve → draft');
  });

  it('accepts the planned critique loop judge → draft', () => {
    expect(ackOf(factsFor(at.afterJudge('fail'), 'draft'))).toBe('accepted');
  });

  it('accepts a human sending work back to a stage already visited', () => {
    let hop = relayHop(['intake', 'retrieve'])!;
    hop = nextHop(hop, HUMAN, 'escalated');
    const pkg = packageAt([], [TICKET, INTAKE], { hop });
    expect(ackOf(factsFor(pkg, 'retrieve', { from: HUMAN }))).toBe('accepted');
    // the same revisit sent by the stage itself is a cycle
    expect(ackOf(factsFor(packageAt(['intake', 'retrieve', 'intake'], [TICKET, INTAKE]), 'retrieve'))).toBe(
      'cycle_detected',
    );
  });
});

describe('decideAck: rejected_budget', () => {
  const judgeCost = () => card('judge').nominalCostUsd;
  const withWallet = (usd_remaining: number) => ({
    ...at.afterDraft(),
    budget: { usd_remaining, revisions_remaining: 2 },
  });

  it('refuses a wallet of exactly zero', () => {
    const d = decideAck(factsFor(withWallet(0), 'judge'));
    expect(d.ack).toBe('rejected_budget');
    expect(d.reason).toContain(`costs $${judgeCost()}`);
  });

  it('accepts a wallet of exactly the stage cost', () => {
    expect(ackOf(factsFor(withWallet(judgeCost()), 'judge'))).toBe('accepted');
  });

  it('refuses a wallet one micro-dollar short of the stage cost', () => {
    expect(ackOf(factsFor(withWallet(judgeCost() - 0.000001), 'judge'))).toBe('rejected_budget');
  });

  it('refuses the empty-budget fixture', () => {
    expect(ackOf(factsFor(fixturePackage('empty-budget.json'), 'judge'))).toBe('rejected_budget');
  });

  // Reservations: what running hops (a fan-out's other branches) hold is not the wallet's to give.
  it('refuses a stage whose reservation does not fit beside what running hops hold, naming both', () => {
    const d = decideAck(factsFor(withWallet(0.01), 'judge', { heldUsd: 0.006 }));
    expect(d).toMatchObject({
      ack: 'rejected_budget',
      reason: `wallet has $0.01 ($0.006 reserved by running hops); "judge" reserves $${judgeCost()}`,
    });
  });
  it('accepts it when the rest of the wallet holds the reservation, and says so', () => {
    const d = decideAck(factsFor(withWallet(0.01), 'judge', { heldUsd: 0.005 }));
    expect(d.ack).toBe('accepted');
    expect(d.reason).toMatch(/wallet \$0\.01 \(\$0\.005 reserved by running hops\), reserves \$0\.005$/);
  });
  it("reserves a card's worst case (worstCaseCostUsd), not its nominal cost", () => {
    const worst = { ...card('judge'), worstCaseCostUsd: 0.02 };
    expect(decideAck({ ...factsFor(withWallet(0.01), 'judge'), card: worst })).toMatchObject({
      ack: 'rejected_budget',
      reason: 'wallet has $0.01; "judge" reserves $0.02',
    });
    expect(decideAck({ ...factsFor(withWallet(0.02), 'judge'), card: worst }).reason).toMatch(/, reserves \$0\.02$/);
  });
  it('keeps the wording recorded histories carry for a serial hop to a card without a worst case', () => {
    expect(decideAck(factsFor(withWallet(0.01), 'judge', { heldUsd: 0 })).reason).toMatch(/, wallet \$0\.01$/);
  });
});

describe('decideAck precedence (ack.ts: schema, role/writer gate, duplicate, hops, cycle, budget)', () => {
  // Every later check fails too, so only the order decides the answer.
  const allWrong = { alreadyDelivered: true, maxHops: 0 };
  const cyclic = ['intake', 'retrieve', 'draft', 'judge', 'writeback'];
  const broke = { budget: { usd_remaining: 0, revisions_remaining: 0 } };

  it('schema beats an unknown stage', () => {
    expect(ackOf(factsFor(rawFixture('wrong-version.json'), 'nobody', allWrong))).toBe('rejected_schema');
  });
  it('role beats the writer gate, duplicate, hop cap and budget', () => {
    const pkg = packageAt(cyclic, [TICKET, INTAKE, CHUNKS, SUMMARY], {
      ...broke,
      evaluator: { last_verdict: 'none', failures: [] },
    });
    expect(ackOf(factsFor(pkg, 'writeback', allWrong))).toBe('rejected_role');
  });
  it('the writer gate beats duplicate, hop cap, cycle and budget', () => {
    const pkg = packageAt(cyclic, [TICKET, INTAKE, CHUNKS, SUMMARY, VERDICT], {
      ...broke,
      evaluator: { last_verdict: 'fail', failures: ['x'] },
    });
    expect(ackOf(factsFor(pkg, 'writeback', allWrong))).toBe('rejected_invariant');
  });
  it('duplicate beats hop cap, cycle and budget', () => {
    const pkg = packageAt(['intake', 'retrieve', 'draft', 'retrieve'], [TICKET, INTAKE, CHUNKS], broke);
    expect(ackOf(factsFor(pkg, 'draft', allWrong))).toBe('duplicate');
  });
  it('hop cap beats cycle and budget', () => {
    const pkg = packageAt(['intake', 'retrieve', 'draft', 'retrieve'], [TICKET, INTAKE, CHUNKS], broke);
    expect(ackOf(factsFor(pkg, 'draft', { maxHops: 3 }))).toBe('max_hops_exceeded');
  });
  it('cycle beats budget', () => {
    const pkg = packageAt(['intake', 'retrieve', 'draft', 'retrieve'], [TICKET, INTAKE, CHUNKS], broke);
    expect(ackOf(factsFor(pkg, 'draft'))).toBe('cycle_detected');
  });
});

describe('ackRecord', () => {
  const now = new Date('2026-03-01T10:00:00Z');
  it('stamps a decision into an AckRecord that satisfies the contract', () => {
    const facts = factsFor(at.afterDraft(), 'judge');
    const pkg = at.afterDraft();
    const rec = ackRecord(decideAck(facts), {
      stage: 'judge',
      hop: facts.hop,
      deliveryKey: deliveryKey(pkg, 'judge'),
      traceparent: pkg.trace.traceparent,
      now,
    });
    expect(AckRecord.safeParse(rec).success).toBe(true);
    expect(rec).toMatchObject({
      ack: 'accepted',
      stage: 'judge',
      hop: 3,
      delivery_key: `${pkg.job_id}:judge:4`,
      at: now.toISOString(),
    });
    expect(rec).not.toHaveProperty('actor');
    expect(rec).not.toHaveProperty('errors');
  });

  it('carries the invariant and the actor when there are any', () => {
    const pkg = { ...at.afterJudge('pass'), evaluator: { last_verdict: 'fail' as const, failures: [] } };
    const facts = factsFor(pkg, 'writeback');
    const rec = ackRecord(decideAck(facts), {
      stage: 'writeback',
      hop: facts.hop,
      deliveryKey: 'k',
      traceparent: pkg.trace.traceparent,
      now,
      actor: 'ops@example.com',
    });
    expect(rec).toMatchObject({
      ack: 'rejected_invariant',
      invariant: 'writeback_requires_pass',
      actor: 'ops@example.com',
    });
    expect(AckRecord.safeParse(rec).success).toBe(true);
  });

  it('bounds the reason and the errors so the ack fits back on the package', () => {
    const many = Array.from({ length: 25 }, (_, i) => ({ path: `/p${i}`, message: 'x'.repeat(400) }));
    const rec = ackRecord(
      { ack: 'rejected_schema', reason: 'r'.repeat(2000), errors: many },
      {
        stage: 'judge',
        hop: nextHop(undefined, 'judge', 'x'),
        deliveryKey: 'k:judge:0',
        traceparent: fixturePackage(VALID_FILE).trace.traceparent,
        now,
      },
    );
    expect(rec.reason).toHaveLength(500);
    expect(rec.errors).toHaveLength(10);
    expect(AckRecord.safeParse(rec).success).toBe(true);
    expect(HANDOFF_V1).toBe('handoff.v1');
  });
});
