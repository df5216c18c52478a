import { describe, expect, it } from 'vitest';
import { HandoffBeginInput, LIMITS } from '../../../contracts';
import { escalationKeys, escalationRecord } from '../../../workflows/rail/handoff-record';

const escalation = { reasons: ['wallet has $0.002; "draft" costs $0.01'], blocked: 'draft', options: ['approve', 'reject', 'top_up'] as const };
const where = { workspace: 'default', project: 'ticket-triage' };
const pkg = { job_id: 'job_1', goal: 'Triage the ticket.', summary: 'hop 0 intake → ticket.v1: refund asked', open_questions: ['order date?'] };

describe('escalationRecord: the record an escalation leaves for a human', () => {
  it('the package summary and questions; the reasons and the decisions as next steps; the rail as creator', () => {
    const record = escalationRecord(pkg, { ...escalation, options: [...escalation.options] }, { ...where, owner: 'ana' });
    expect(record).toEqual({
      workspace: 'default',
      project: 'ticket-triage',
      job_id: 'job_1',
      summary: pkg.summary,
      open_questions: ['order date?'],
      next_steps: ['resolve: wallet has $0.002; "draft" costs $0.01', 'decide approve | reject | top_up (the job is blocked at draft)'],
      owner: 'ana',
      created_by: 'rail',
    });
    expect(HandoffBeginInput.safeParse(record).success).toBe(true);
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
    expect(HandoffBeginInput.safeParse(record).success).toBe(true);
  });

  it('keys per escalation of a job, not per hop: a job escalating twice at one hop gets two records', () => {
    expect(escalationKeys('job_1', 1)).toEqual({ begin: 'job_1:escalation:1', close: 'job_1:escalation:1:close' });
    expect(escalationKeys('job_1', 2).begin).not.toBe(escalationKeys('job_1', 1).begin);
  });
});
