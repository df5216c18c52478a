import { describe, expect, it } from 'vitest';
import type { Escalation } from '../../../workflows/definitions';
import { decisionOptions, validateDecision } from '../../../workflows/rail/decisions';
import { at, factsFor, fixturePackage, stages } from './helpers';
import { ackRecord, decideAck } from '../../../workflows/rail/ack';
import { LIMITS, type AckRecord, type HandoffV1 } from '../../../contracts';

/** The package as the rail holds it after refusing a hop to `stage` (the refusing ack on it). */
function refused(pkg: HandoffV1, stage: string, raw: unknown = pkg): HandoffV1 {
  const facts = factsFor(raw, stage);
  const decision = decideAck(facts);
  const ack: AckRecord = ackRecord(decision, {
    stage,
    hop: facts.hop,
    deliveryKey: 'k',
    traceparent: pkg.trace.traceparent,
    now: new Date(0),
  });
  return { ...pkg, ack };
}

const escalation = (options: Escalation['options']): Escalation => ({
  reasons: ['x'],
  blocked: 'draft',
  options,
  since: '2026-01-01T00:00:00.000Z',
});

describe('decisionOptions', () => {
  it('offers only reject and top_up for a schema-rejected package', () => {
    const bad = { ...fixturePackage(), budget: { usd_remaining: -1, revisions_remaining: 0 } };
    const pkg = refused(fixturePackage(), 'judge', bad);
    expect(pkg.ack!.ack).toBe('rejected_schema');
    const options = decisionOptions(pkg, pkg.ack, 'judge', stages);
    expect(options).toEqual(['reject', 'top_up']);
    expect(options).not.toContain('approve');
    expect(options).not.toContain('revise');
  });

  it('offers reject, top_up and revise but not approve when revisions ran out on a failing verdict (approve cannot pass a failed draft)', () => {
    const pkg = { ...at.afterJudge('fail'), budget: { usd_remaining: 1, revisions_remaining: 0 } };
    expect(decisionOptions(pkg, pkg.ack, 'draft', stages)).toEqual(['reject', 'top_up', 'revise']);
  });

  it('offers all four when an invariant broke at draft and the drafter can take the package again', () => {
    const pkg = at.afterRetrieve();
    expect(decisionOptions(pkg, { ...pkg.ack!, ack: 'rejected_invariant' }, 'draft', stages)).toEqual([
      'approve',
      'reject',
      'top_up',
      'revise',
    ]);
  });

  it("offers no top_up when the hop was refused for its handover's token cap (money cannot shrink a transcript)", () => {
    const pkg = at.afterRetrieve();
    const capped = {
      ...pkg.ack!,
      ack: 'rejected_budget' as const,
      reason: 'context_budget_exceeded: draft failed: ContextBudgetExceeded: …',
    };
    expect(decisionOptions(pkg, capped, 'draft', stages)).toEqual(['approve', 'reject', 'revise']);
    expect(
      decisionOptions(pkg, { ...capped, reason: 'wallet has $0.002; "draft" costs $0.01' }, 'draft', stages),
    ).toEqual(['approve', 'reject', 'top_up', 'revise']);
  });

  it("reads the hop's last ack, not the package, so a package too broken to carry its ack still excludes approve", () => {
    const pkg = at.afterRetrieve();
    const schemaAck = { ...pkg.ack!, ack: 'rejected_schema' as const };
    expect(decisionOptions(pkg, schemaAck, 'draft', stages)).toEqual(['reject', 'top_up']);
  });

  it('offers approve but not revise when the drafter cannot take the newest artifact', () => {
    const pkg = refused({ ...at.afterDraft(), budget: { usd_remaining: 0, revisions_remaining: 1 } }, 'judge');
    expect(pkg.ack!.ack).toBe('rejected_budget');
    expect(decisionOptions(pkg, pkg.ack, 'judge', stages)).toEqual(['approve', 'reject', 'top_up']);
  });

  it('offers revise for a package whose newest artifact is chunks (an invariant broke at draft)', () => {
    expect(decisionOptions(at.afterRetrieve(), undefined, 'draft', stages)).toContain('revise');
  });
});

describe('validateDecision', () => {
  it('a decision through a handoff record is taken only through the record of the escalation the job waits on', () => {
    const esc = {
      reasons: ['x'],
      blocked: 'draft',
      options: ['approve', 'reject'] as ('approve' | 'reject')[],
      since: '2026-12-01T00:00:00Z',
    };
    const open = 'hr_0123456789abcdef0123456789abcdef';
    expect(() =>
      validateDecision({ action: 'approve', actor: 'ana', handoff_record: open }, esc, false, open),
    ).not.toThrow();
    expect(() =>
      validateDecision(
        { action: 'approve', actor: 'ana', handoff_record: 'hr_ffffffffffffffffffffffffffffffff' },
        esc,
        false,
        open,
      ),
    ).toThrow(/is not the record of the escalation this job waits on/);
    expect(() =>
      validateDecision({ action: 'approve', actor: 'ana', handoff_record: open }, esc, false, undefined),
    ).toThrow(/is not the record/);
    // Without a record (the CLI, the Web UI) the decision is the operator's, as before.
    expect(() => validateDecision({ action: 'approve', actor: 'ana' }, esc, false, open)).not.toThrow();
  });

  const ok = escalation(['approve', 'reject', 'top_up']);

  it('accepts a well-formed decision the escalation offers', () => {
    expect(() => validateDecision({ action: 'approve', actor: 'ops@example.com' }, ok, false)).not.toThrow();
    expect(() => validateDecision({ action: 'top_up', actor: 'ops', usd: 0.5 }, ok, false)).not.toThrow();
    expect(() => validateDecision({ action: 'top_up', actor: 'ops', revisions: 1 }, ok, false)).not.toThrow();
  });

  it('takes a word on a write in doubt only with approve, and only when the escalation blocks a writer', () => {
    const happened = { action: 'approve', actor: 'ops', in_doubt: { happened: 'pay_1' } };
    expect(() => validateDecision(happened, ok, false, undefined, true)).not.toThrow();
    expect(() =>
      validateDecision({ action: 'approve', actor: 'ops', in_doubt: { send: true } }, ok, false, undefined, true),
    ).not.toThrow();
    expect(() => validateDecision(happened, ok, false, undefined, false)).toThrow(
      'in_doubt is a word on a write in doubt: give it with approve, on an escalated writer',
    );
    expect(() =>
      validateDecision({ action: 'reject', actor: 'ops', in_doubt: { send: true } }, ok, false, undefined, true),
    ).toThrow(/^in_doubt is a word/);
    expect(() =>
      validateDecision({ action: 'approve', actor: 'ops', in_doubt: { send: false } }, ok, false, undefined, true),
    ).toThrow(/^invalid decision: /);
  });

  it('refuses when the job is not waiting for a decision', () => {
    expect(() => validateDecision({ action: 'approve', actor: 'ops' }, undefined, false)).toThrow(/not waiting/);
  });

  it('refuses a second decision while one is being applied', () => {
    expect(() => validateDecision({ action: 'approve', actor: 'ops' }, ok, true)).toThrow(/already/);
  });

  it.each([
    ['no actor', { action: 'approve' }, /actor/],
    ['empty actor', { action: 'approve', actor: '' }, /actor/],
    ['unknown action', { action: 'delete', actor: 'ops' }, /action/],
    ['negative usd', { action: 'top_up', actor: 'ops', usd: -1 }, /usd/],
    ['fractional revisions', { action: 'top_up', actor: 'ops', revisions: 0.5 }, /revisions/],
    ['not an object', 'approve', /invalid decision/],
  ])('refuses an invalid shape (%s), naming the field', (_what, decision, field) => {
    expect(() => validateDecision(decision, ok, false)).toThrow(/^invalid decision: /);
    expect(() => validateDecision(decision, ok, false)).toThrow(field);
  });

  it.each([
    ['spaces only', '   '],
    ['a bidi override', '\u202eecila'],
    ['a NUL', 'ops\u0000'],
  ])('refuses an actor with %s, which the acks would record', (_name, actor) => {
    expect(() => validateDecision({ action: 'approve', actor }, ok, false)).toThrow(/^invalid decision: actor: /);
  });

  it('refuses an action this escalation does not offer, listing the ones it does', () => {
    expect(() => validateDecision({ action: 'revise', actor: 'ops' }, ok, false)).toThrow(
      '"revise" is not possible for this escalation; choose one of: approve, reject, top_up',
    );
  });

  it.each([
    ['no amounts', {}],
    ['zero amounts', { usd: 0, revisions: 0 }],
  ])('refuses a top_up with %s', (_what, amounts) => {
    expect(() => validateDecision({ action: 'top_up', actor: 'ops', ...amounts }, ok, false)).toThrow(
      'top_up needs usd > 0 or revisions > 0',
    );
  });

  it.each([
    ['usd past the cap', { usd: 1e308 }, /^invalid decision: usd: /],
    ['revisions past the cap', { revisions: Number.MAX_SAFE_INTEGER }, /^invalid decision: revisions: /],
    [
      'usd below the wallet unit (one micro-dollar)',
      { usd: 1e-7 },
      'invalid decision: usd: must be 0 or at least one micro-dollar (0.000001)',
    ],
  ])('refuses a top_up with %s, which would break the wallet or change nothing', (_name, amounts, message) => {
    expect(() => validateDecision({ action: 'top_up', actor: 'ops', ...amounts }, ok, false)).toThrow(message);
  });

  it('refuses a revise note too long to be filed as one evaluator failure', () => {
    const revise = escalation(['reject', 'revise']);
    expect(() =>
      validateDecision({ action: 'revise', actor: 'ops', note: 'n'.repeat(LIMITS.decisionNote) }, revise, false),
    ).not.toThrow();
    expect(() =>
      validateDecision({ action: 'revise', actor: 'ops', note: 'n'.repeat(LIMITS.decisionNote + 1) }, revise, false),
    ).toThrow(/^invalid decision: note: /);
    expect(() => validateDecision({ action: 'revise', actor: 'ops', note: 'n'.repeat(500) }, revise, false)).toThrow(
      /^invalid decision: note: /,
    );
  });

  it('accepts a top_up of one micro-dollar', () => {
    expect(() => validateDecision({ action: 'top_up', actor: 'ops', usd: 0.000001 }, ok, false)).not.toThrow();
  });

  it('checks in order: waiting, already decided, shape, offered, amounts', () => {
    expect(() => validateDecision('garbage', undefined, true)).toThrow(/not waiting/);
    expect(() => validateDecision('garbage', ok, true)).toThrow(/already/);
    expect(() => validateDecision({ action: 'revise' }, ok, false)).toThrow(/invalid decision/);
    expect(() => validateDecision({ action: 'top_up', actor: 'ops' }, escalation(['reject']), false)).toThrow(
      /not possible/,
    );
  });

  it('refuses approve on a schema-rejected package end to end (options from decisionOptions)', () => {
    const bad = { ...fixturePackage(), job_id: 'has space' };
    const pkg = refused(fixturePackage(), 'judge', bad);
    const e = escalation(decisionOptions(pkg, pkg.ack, 'judge', stages));
    expect(() => validateDecision({ action: 'approve', actor: 'ops' }, e, false)).toThrow(/not possible/);
    expect(() => validateDecision({ action: 'reject', actor: 'ops' }, e, false)).not.toThrow();
  });
});

describe('a word on a tool call', () => {
  const digest = `sha256:${'ab'.repeat(32)}`;
  const waiting = (editable: boolean): Escalation => ({
    ...escalation(['approve', 'reject']),
    tool_call: {
      name: 'search',
      call_id: 'c1',
      args: { query: 'refunds' },
      digest,
      ...(editable ? { editable: true as const } : {}),
    },
  });
  const word = (tool_call: Record<string, unknown>) => ({ action: 'approve', actor: 'ana', tool_call });

  it.each([
    [
      'approve without a word',
      { action: 'approve', actor: 'ana' },
      waiting(false),
      /waits on a tool call: approve it with tool_call/,
    ],
    [
      'another digest',
      word({ digest: `sha256:${'cd'.repeat(32)}`, verdict: 'approve' }),
      waiting(false),
      /is not the call/,
    ],
    [
      'a word where no call waits',
      word({ digest, verdict: 'approve' }),
      escalation(['approve', 'reject']),
      /no tool call waits/,
    ],
    [
      'a word on reject',
      { action: 'reject', actor: 'ana', tool_call: { digest, verdict: 'deny' } },
      waiting(false),
      /given with approve/,
    ],
    [
      'edited arguments the grant does not allow',
      word({ digest, verdict: 'approve', args: { query: 'x' } }),
      waiting(false),
      /does not allow a human to edit/,
    ],
    [
      'edited arguments on a denial',
      word({ digest, verdict: 'deny', args: { query: 'x' } }),
      waiting(true),
      /given with verdict approve/,
    ],
  ])('refuses %s', (_, decision, esc, why) => {
    expect(() => validateDecision(decision, esc, false)).toThrow(why);
  });

  it('takes run, deny, and run with edited arguments where the grant allows edits', () => {
    expect(() => validateDecision(word({ digest, verdict: 'approve' }), waiting(false), false)).not.toThrow();
    expect(() => validateDecision(word({ digest, verdict: 'deny' }), waiting(false), false)).not.toThrow();
    expect(() =>
      validateDecision(word({ digest, verdict: 'approve', args: { query: 'refund policy' } }), waiting(true), false),
    ).not.toThrow();
    expect(() => validateDecision({ action: 'reject', actor: 'ana' }, waiting(false), false)).not.toThrow();
  });
});
