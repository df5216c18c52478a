import { describe, expect, it } from 'vitest';
import {
  EscalationRecordBeginInput,
  EscalationRecordDecideRequest,
  escalationRecordDelta,
  EscalationRecord,
  HumanDecision,
  decideEscalationRecordTransition,
  neutraliseBidi,
  validators,
  type EscalationRecordTransitionOutcome,
  type EscalationRecordState,
  type EscalationRecordRequest,
} from '../../../contracts';

const ID = 'hr_0123456789abcdef0123456789abcdef';
const accept = (actor: string): EscalationRecordRequest => ({ transition: 'accept', actor });
const cancel = (actor: string): EscalationRecordRequest => ({ transition: 'cancel', actor });
const close: EscalationRecordRequest = { transition: 'close', reason: 'decided' };
const decidedBy = (actor: string): EscalationRecordRequest => ({
  transition: 'close',
  reason: 'decided',
  decided_by: { actor, action: 'approve' },
});

const CASES: [
  string,
  EscalationRecordState,
  string | null,
  EscalationRecordRequest,
  EscalationRecordTransitionOutcome['ok'],
  string,
][] = [
  ['accept an open record', 'open', null, accept('ana'), true, 'transition:accepted'],
  ['accept again by the same actor', 'accepted', 'ana', accept('ana'), true, 'none'],
  ['accept by another actor', 'accepted', 'ana', accept('bo'), false, 'conflict'],
  ['accept a cancelled record', 'cancelled', null, accept('ana'), false, 'illegal_transition'],
  ['accept a closed record', 'closed', null, accept('ana'), false, 'illegal_transition'],
  ['cancel an open record', 'open', null, cancel('ana'), true, 'transition:cancelled'],
  ['cancel an accepted record', 'accepted', 'ana', cancel('bo'), true, 'transition:cancelled'],
  ['cancel a cancelled record', 'cancelled', null, cancel('ana'), false, 'illegal_transition'],
  ['cancel a closed record', 'closed', null, cancel('ana'), false, 'illegal_transition'],
  ['close an open record', 'open', null, close, true, 'transition:closed'],
  ['close an accepted record', 'accepted', 'ana', close, true, 'transition:closed'],
  ['close a cancelled record', 'cancelled', null, close, false, 'illegal_transition'],
  ['close a closed record', 'closed', null, close, false, 'illegal_transition'],
  ['close an open record on a decision', 'open', null, decidedBy('ana'), true, 'transition:closed'],
  ['close on a decision a record the decider took', 'accepted', 'ana', decidedBy('ana'), true, 'transition:closed'],
  ['close on a decision a record another took', 'accepted', 'bo', decidedBy('ana'), false, 'conflict'],
  ['close on a decision a cancelled record', 'cancelled', null, decidedBy('ana'), false, 'illegal_transition'],
];

describe('escalation record lifecycle (decideEscalationRecordTransition)', () => {
  it.each(CASES)('%s', (_name, state, acceptedBy, request, ok, outcome) => {
    const decision = decideEscalationRecordTransition({ id: ID, state, accepted_by: acceptedBy }, request);
    expect(decision.ok).toBe(ok);
    if (decision.ok) expect(decision.change === 'none' ? 'none' : `transition:${decision.to}`).toBe(outcome);
    else {
      expect(decision.code).toBe(outcome);
      expect(decision.message).toContain(ID);
    }
  });

  it('says what was refused and why', () => {
    expect(decideEscalationRecordTransition({ id: ID, state: 'cancelled', accepted_by: null }, accept('ana'))).toEqual({
      ok: false,
      code: 'illegal_transition',
      message: `cannot accept handoff record ${ID}: it is already cancelled`,
    });
    expect(
      decideEscalationRecordTransition({ id: ID, state: 'accepted', accepted_by: 'ana' }, accept('bo')),
    ).toMatchObject({
      message: `handoff record ${ID} was already accepted by ana`,
    });
  });
});

describe('handoff record schemas', () => {
  const begin = {
    workspace: 'acme',
    project: 'support',
    job_id: 'tkt_1',
    summary: 'Refund question',
    open_questions: ['timezone?'],
    next_steps: ['call back'],
    created_by: 'rail',
  };

  it('refuses bidi embeddings, overrides and isolates in what a person reads of a begin or a decision, and keeps right-to-left marks', () => {
    const spoofs = ['refund \u202e000,01$ ot pu', 'a\u202ab', 'a\u2066b\u2069', 'a\u2068b'];
    for (const spoof of spoofs) {
      for (const over of [{ summary: spoof }, { open_questions: [spoof] }, { next_steps: [spoof] }]) {
        const parsed = EscalationRecordBeginInput.safeParse({ ...begin, ...over });
        expect(parsed.success, JSON.stringify(over)).toBe(false);
        expect(parsed.error?.issues[0]?.message).toContain('bidi');
      }
      const decision = { action: 'approve', actor: 'ana', note: spoof };
      expect(HumanDecision.safeParse(decision).success).toBe(false);
      expect(validators.humanDecision(decision)).toBe(false);
      expect(EscalationRecordDecideRequest.safeParse({ action: 'approve', note: spoof }).success).toBe(false);
    }
    const marked = 'שלום \u200fעולם\u200e \u061c(42)';
    expect(EscalationRecordBeginInput.safeParse({ ...begin, summary: marked }).success).toBe(true);
    expect(validators.humanDecision({ action: 'approve', actor: 'ana', note: marked })).toBe(true);
    expect(neutraliseBidi('refund \u202e000,01$ ot pu \u2067x\u2069 \u200f')).toBe(
      'refund \uFFFD000,01$ ot pu \uFFFDx\uFFFD \u200f',
    );
  });

  it('zod and the generated validator agree on a begin and a record', () => {
    expect(EscalationRecordBeginInput.safeParse(begin).success).toBe(true);
    expect(validators.handoffBegin(begin)).toBe(true);
    const record = {
      ...begin,
      id: ID,
      owner: null,
      state: 'open',
      created_at: '2026-12-01T10:00:00.000Z',
      accepted_by: null,
      accepted_at: null,
      cancelled_by: null,
      cancelled_at: null,
      closed_at: null,
      close_reason: null,
    };
    expect(EscalationRecord.safeParse(record).success).toBe(true);
    expect(validators.handoffRecord(record)).toBe(true);
  });

  it('bounds and refuses: a blank summary, too many questions, an unknown field, a job id with a colon', () => {
    for (const bad of [
      { ...begin, summary: '   ' },
      { ...begin, open_questions: Array.from({ length: 65 }, () => 'q') },
      { ...begin, extra: 1 },
      { ...begin, job_id: 'tkt:1' },
    ]) {
      expect(EscalationRecordBeginInput.safeParse(bad).success).toBe(false);
      expect(validators.handoffBegin(bad)).toBe(false);
    }
  });
});

describe('escalationRecordDelta: what a decided record re-injects into the log', () => {
  const record = {
    id: ID,
    summary: 'Refund past the window.',
    open_questions: ['order date?'],
    next_steps: ['resolve: wallet empty', 'decide approve | reject'],
    accepted_by: 'ana',
  };

  it('names the record, who took it, the decision and its note, then the summary, questions and steps', () => {
    expect(escalationRecordDelta(record, { action: 'top_up', actor: 'ana', note: 'key account' })).toBe(
      [
        `Handoff record ${ID}, taken by ana: decided top_up by ana.`,
        'Decision note: key account',
        'Summary: Refund past the window.',
        'Open questions:',
        '- order date?',
        'Next steps:',
        '- resolve: wallet empty',
        '- decide approve | reject',
      ].join('\n'),
    );
  });

  it('leaves out what the record or decision does not have', () => {
    expect(
      escalationRecordDelta(
        { ...record, open_questions: [], next_steps: [], accepted_by: null },
        { action: 'approve', actor: 'ops' },
      ),
    ).toBe(`Handoff record ${ID}: decided approve by ops.\nSummary: Refund past the window.`);
  });
});

describe('EscalationRecordDecideRequest: a decision over HTTP has no actor field', () => {
  it('refuses an actor and unknown fields, keeps the rest of HumanDecision', () => {
    expect(EscalationRecordDecideRequest.safeParse({ action: 'top_up', usd: 1, note: 'ok' }).success).toBe(true);
    expect(EscalationRecordDecideRequest.safeParse({ action: 'approve', actor: 'mallory' }).success).toBe(false);
    expect(EscalationRecordDecideRequest.safeParse({ action: 'approve', extra: 1 }).success).toBe(false);
    expect(EscalationRecordDecideRequest.safeParse({ action: 'escalate' }).success).toBe(false);
  });
});
