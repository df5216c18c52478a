import { describe, expect, it } from 'vitest';
import { definePipeline, newestArtifact } from '../../../contracts';
import { supportRouting } from '../../../contracts/pipelines/support-routing';
import { admitHop } from '../../../workflows/rail/hop-decisions';
import { DEFAULT_MAX_HOPS } from '../../../workflows/rail/hop-chain';
import { ticketTriage } from '../../../contracts/pipelines/ticket-triage';
import { decideAck } from '../../../workflows/rail/ack';
import { returnToSender, revisionsExhausted, route } from '../../../workflows/rail/routing';
import { CHUNKS, INTAKE, RECEIPT, SUMMARY, TICKET, VERDICT, at, card, factsFor, packageAt, ref } from './helpers';
import { ticketEntry } from '../../../contracts/pipelines/ticket-entry';

describe('route: the planned relay', () => {
  it.each([
    ['ticket.raw', at.start, 'intake'],
    ['intake.v1', at.afterIntake, 'retrieve'],
    ['chunks.v1', at.afterRetrieve, 'draft'],
    ['summary_md', at.afterDraft, 'judge'],
  ] as const)('after %s goes to %s', (_type, build, to) => {
    const pkg = build();
    expect(route(ticketTriage, pkg)).toEqual({ kind: 'hop', to, reason: expect.any(String), package: pkg });
  });

  it('after no_hit.v1 goes to draft (a no_match summary)', () => {
    const pkg = packageAt(['intake', 'retrieve'], [TICKET, INTAKE, ref('no_hit.v1', '7')]);
    expect(route(ticketTriage, pkg)).toMatchObject({ kind: 'hop', to: 'draft', reason: 'draft a no_match summary' });
  });

  it('after a passing verdict goes to writeback', () => {
    expect(route(ticketTriage, at.afterJudge('pass'))).toMatchObject({ kind: 'hop', to: 'writeback' });
  });

  it('after a receipt the job is complete', () => {
    const pkg = packageAt(
      ['intake', 'retrieve', 'draft', 'judge', 'writeback'],
      [TICKET, INTAKE, CHUNKS, SUMMARY, VERDICT, RECEIPT],
      {
        evaluator: { last_verdict: 'pass', failures: [] },
      },
    );
    expect(route(ticketTriage, pkg)).toEqual({ kind: 'complete', reason: 'written back' });
  });
});

describe('route: the critique loop', () => {
  it('a failing verdict with revisions left goes back to draft, spending one revision and naming the failures', () => {
    const pkg = at.afterJudge('fail', ['citation_missing', 'too_long']);
    expect(pkg.budget.revisions_remaining).toBe(2);
    const r = route(ticketTriage, pkg);
    expect(r).toMatchObject({ kind: 'hop', to: 'draft', reason: 'revise: citation_missing; too_long' });
    if (r.kind !== 'hop') throw new Error('unreachable');
    expect(r.package.budget).toEqual({ ...pkg.budget, revisions_remaining: 1 });
    expect(r.package.evaluator).toEqual(pkg.evaluator);
  });

  it('does not touch the package it was given when it spends a revision', () => {
    const pkg = at.afterJudge('fail');
    route(ticketTriage, pkg);
    expect(pkg.budget.revisions_remaining).toBe(2);
  });

  it('the last revision is spendable (1 → 0)', () => {
    const pkg = { ...at.afterJudge('fail'), budget: { usd_remaining: 1, revisions_remaining: 1 } };
    const r = route(ticketTriage, pkg);
    expect(r.kind === 'hop' && r.package.budget.revisions_remaining).toBe(0);
  });

  it('a failing verdict with no revisions left escalates, resuming at draft', () => {
    const pkg = { ...at.afterJudge('fail'), budget: { usd_remaining: 1, revisions_remaining: 0 } };
    expect(route(ticketTriage, pkg)).toEqual({
      kind: 'escalate',
      reason: expect.stringContaining('revisions exhausted'),
      resume: 'draft',
    });
  });

  it('a failing verdict without a failure list still says why it revises', () => {
    expect(route(ticketTriage, at.afterJudge('fail', []))).toMatchObject({
      kind: 'hop',
      to: 'draft',
      reason: 'revise: the critic judge failed the work of draft',
    });
  });
});

describe('route: what the table does not know escalates', () => {
  it('an unknown artifact type escalates naming it', () => {
    const pkg = packageAt(['intake'], [TICKET, ref('sentiment.v1', '5')]);
    expect(route(ticketTriage, pkg)).toEqual({ kind: 'escalate', reason: 'no route after sentiment.v1' });
  });

  it('a package with no artifacts escalates', () => {
    expect(route(ticketTriage, packageAt([], []))).toEqual({
      kind: 'escalate',
      reason: 'no route after an empty package',
    });
  });

  it('a verdict with last_verdict none escalates rather than guessing', () => {
    const pkg = { ...at.afterJudge('pass'), evaluator: { last_verdict: 'none' as const, failures: [] } };
    expect(route(ticketTriage, pkg)).toMatchObject({ kind: 'escalate' });
  });
});

describe('route agrees with the stage cards', () => {
  const types = [...new Set([ticketTriage.entry, ...ticketTriage.cards.flatMap((c) => c.outputs)])];

  it.each(types)('every hop routed after %s goes to a stage that acks it accepted', (type) => {
    const routed = (['pass', 'fail'] as const).flatMap((last_verdict) => {
      const pkg = packageAt([], [ref(type, '8')], { evaluator: { last_verdict, failures: [] } });
      const r = route(ticketTriage, pkg);
      return r.kind === 'hop' ? [{ pkg, r }] : [];
    });
    expect(routed.length > 0 || type === 'receipt.v1').toBe(true);
    for (const { pkg, r } of routed) {
      expect(card(r.to).accepts).toContain(newestArtifact(pkg)!.type);
      expect(decideAck(factsFor(r.package, r.to)).ack).toBe('accepted');
    }
  });

  it('only the final output (receipt.v1) completes the job', () => {
    const completing = types.filter((type) => {
      const pkg = {
        ...at.afterDraft(),
        artifacts: [ref(type, '8')],
        evaluator: { last_verdict: 'pass' as const, failures: [] },
      };
      return route(ticketTriage, pkg).kind === 'complete';
    });
    expect(completing).toEqual(['receipt.v1']);
  });
});

describe('returnToSender', () => {
  const retrieveStep = (pkg: ReturnType<typeof at.afterIntake>) => ({
    kind: 'hop' as const,
    to: 'retrieve',
    reason: 'find help-center evidence',
    package: pkg,
  });
  const returned = {
    ...at.afterIntake(),
    hop: {
      from: 'intake',
      to: 'retrieve',
      reason: 'find help-center evidence',
      count: 1,
      chain: ['client', 'intake', 'retrieve'],
    },
  };

  it('escalates by default, naming the reason, with the refused hop to retry', () => {
    expect(returnToSender(ticketTriage, returned, retrieveStep(returned), 'stage unavailable: …')).toEqual({
      kind: 'escalate',
      reason: 'stage unavailable: …',
      resume: 'retrieve',
      retry: retrieveStep(returned),
    });
  });

  it("follows the sender's card: reroute (or degrade) to the stage it names, sent by the sender", () => {
    const intake = { ...card('intake'), onTargetUnavailable: { action: 'reroute' as const, to: 'retrieve-lite' } };
    const pipeline = { get: (name: string) => (name === 'intake' ? intake : ticketTriage.get(name)) };
    expect(returnToSender(pipeline, returned, retrieveStep(returned), 'stage unavailable: …')).toEqual({
      kind: 'hop',
      to: 'retrieve-lite',
      reason: 'returned to intake: retrieve unavailable, reroute to retrieve-lite',
      handoff: 'load_balancing',
      package: returned,
      from: 'intake',
    });
  });
});

describe('the typed handoff reasons', () => {
  it('a route names one and the rail puts it on the hop block it delivers', () => {
    const classified = packageAt(['classify'], [TICKET, ref('classification.v1', '9')]);
    const bodies = { 'classification.v1': { sentiment: 0.1, complexity: 2, intent: 'billing', language: 'en' } };
    const step = route(supportRouting, classified, bodies);
    expect(step).toMatchObject({ kind: 'hop', to: 'escalation', handoff: 'escalation' });
    if (step.kind !== 'hop') throw new Error('expected a hop');
    const admission = admitHop({
      pipeline: supportRouting,
      stage: step.to,
      package: step.package,
      reason: step.reason,
      handoff: step.handoff,
      maxHops: DEFAULT_MAX_HOPS,
      fallbackTraceparent: classified.trace.traceparent,
      fallbackJobId: 'j',
    });
    expect(admission.hop).toMatchObject({ from: 'classify', to: 'escalation', handoff_reason: 'escalation' });
  });
  it('a route without one leaves the hop block as before', () => {
    expect(route(ticketTriage, at.afterIntake())).not.toHaveProperty('handoff');
  });
  it('a pipeline naming a reason the rail does not know refuses to load', () => {
    const spec = {
      name: 'odd',
      entry: ticketEntry,
      stages: ticketTriage.cards,
      routes: ticketTriage.routes.map((r) =>
        'to' in r && r.to === 'retrieve' ? { ...r, handoff: 'vibes' as never } : r,
      ),
      revisits: ticketTriage.revisits,
    };
    expect(() => definePipeline(spec)).toThrow(
      /has handoff "vibes"; use one of capability_boundary, specialization, escalation, load_balancing/,
    );
  });
});

describe('route: escalation reasons speak of roles and the pipeline’s own stages', () => {
  it('revisions exhausted names the critic that still fails the work and the reviser that gets no more', () => {
    const pkg = { ...at.afterJudge('fail'), budget: { usd_remaining: 1, revisions_remaining: 0 } };
    const step = route(ticketTriage, pkg);
    expect(step).toMatchObject({
      kind: 'escalate',
      reason: 'revisions exhausted: the critic judge still fails the work of the reviser draft',
    });
    // Another pipeline's stage names, not the reference pipeline's.
    expect(revisionsExhausted('the critic approver', 'redraft')).toBe(
      'revisions exhausted: the critic approver still fails the work of the reviser redraft',
    );
  });
});
