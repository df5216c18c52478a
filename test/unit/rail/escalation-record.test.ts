import { describe, expect, it } from 'vitest';
import { ESCALATION_RECORD_KEY_MAX, EscalationRecordBeginInput, LIMITS } from '../../../contracts';
import { escalationKeys, escalationRecord } from '../../../workflows/rail/escalation-record';

const escalation = {
  reasons: ['wallet has $0.002; "draft" costs $0.01'],
  blocked: 'draft',
  options: ['approve', 'reject', 'top_up'] as const,
};
const where = { workspace: 'default', project: 'ticket-triage' };
const pkg = {
  job_id: 'job_1',
  goal: 'Triage the ticket.',
  summary: 'hop 0 intake → ticket.v1: refund asked',
  open_questions: ['order date?'],
};

describe('escalationRecord: the record an escalation leaves for a human', () => {
  it('the package summary and questions; the reasons and the decisions as next steps; the rail as creator', () => {
    const record = escalationRecord(
      pkg,
      { ...escalation, options: [...escalation.options] },
      { ...where, owner: 'ana' },
    );
    expect(record).toEqual({
      workspace: 'default',
      project: 'ticket-triage',
      job_id: 'job_1',
      summary: pkg.summary,
      open_questions: ['order date?'],
      next_steps: [
        'resolve: wallet has $0.002; "draft" costs $0.01',
        'decide approve | reject | top_up (the job is blocked at draft)',
      ],
      owner: 'ana',
      created_by: 'rail',
    });
    expect(EscalationRecordBeginInput.safeParse(record).success).toBe(true);
  });

  it('what a package may hold and a record may not becomes a valid record: no summary, blank questions, unpaired surrogates, long reasons', () => {
    const record = escalationRecord(
      { ...pkg, summary: '  ', open_questions: ['', '   ', 'half \uD800 pair?'] },
      { ...escalation, options: ['reject'], reasons: ['x'.repeat(LIMITS.shortText + 50)] },
      where,
    );
    expect(record.summary).toBe(pkg.goal);
    expect(record.open_questions).toEqual(['half \uFFFD pair?']);
    expect(record.next_steps[0]).toHaveLength(LIMITS.shortText);
    expect(record).not.toHaveProperty('owner');
    expect(EscalationRecordBeginInput.safeParse(record).success).toBe(true);
  });

  it('a stage’s bidi override becomes visible, not refused: the escalation keeps its record', () => {
    const record = escalationRecord(
      { ...pkg, summary: 'refund \u202e000,01$ ot pu', open_questions: ['which \u2067amount\u2069?'] },
      { ...escalation, options: [...escalation.options], reasons: ['judge: \u202dfine'] },
      where,
    );
    expect(record.summary).toBe('refund \uFFFD000,01$ ot pu');
    expect(record.open_questions).toEqual(['which \uFFFDamount\uFFFD?']);
    expect(record.next_steps[0]).toBe('resolve: judge: \uFFFDfine');
    expect(EscalationRecordBeginInput.safeParse(record).success).toBe(true);
  });

  it('keys per escalation of a run, not per hop, marked with the run: a reset run or a reused job id begins records of its own', () => {
    const run = '01a23286-2890-709a-bab4-2e4e2d4932de';
    expect(escalationKeys('job_1', run, 1)).toEqual({
      begin: 'job_1:escalation:bab42e4e2d4932de:1',
      close: 'job_1:escalation:bab42e4e2d4932de:1:close',
    });
    expect(escalationKeys('job_1', run, 2).begin).not.toBe(escalationKeys('job_1', run, 1).begin);
    expect(escalationKeys('job_1', '01a23286-2890-709a-bab4-ffffffffffff', 1).begin).not.toBe(
      escalationKeys('job_1', run, 1).begin,
    );
    // The longest job id still leaves room for the decider's accept key under the store's limit.
    expect(`${escalationKeys('j'.repeat(LIMITS.id), run, 99).close}:accept`.length).toBeLessThanOrEqual(
      ESCALATION_RECORD_KEY_MAX,
    );
  });
});
