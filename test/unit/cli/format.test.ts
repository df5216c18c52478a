import { describe, expect, it } from 'vitest';
import type { AckRecord } from '../../../contracts';
import { listText, outcomeLine, progressLine, statusText, table, usd } from '../../../src/operator/cli/format';
import type { JobStatusView } from '../../../workflows/definitions';

const ack: AckRecord = { ack: 'rejected_budget', stage: 'draft', hop: 2, reason: 'wallet has $0.002', delivery_key: 'j:draft:2', traceparent: `00-${'a'.repeat(32)}-${'b'.repeat(16)}-01`, at: '2026-01-01T00:00:00Z' };
const escalated: JobStatusView = {
  job_id: 'j',
  status: 'escalated',
  stage: 'human',
  hops: 1,
  usd_remaining: 0.002,
  revisions_remaining: 1,
  spent_usd: 0.003, reserved_usd: 0, reservations: [],
  last_verdict: 'none',
  escalation: { reasons: ['wallet has $0.002'], blocked: 'draft', options: ['approve', 'top_up'], since: '2026-01-01T00:00:00Z' },
};

describe('CLI output', () => {
  it('money drops floating-point dust', () => {
    expect(usd(0.1 + 0.2)).toBe('$0.3');
    expect(usd(undefined)).toBe('-');
  });

  it('money that is not a finite number (JSON turns Infinity into null) prints as - instead of throwing', () => {
    for (const n of [null, Infinity, Number.NaN]) expect(usd(n as number)).toBe('-');
    const broken = { ...escalated, usd_remaining: null, revisions_remaining: null, spent_usd: null } as unknown as JobStatusView;
    expect(statusText(broken)).toMatch(/^wallet\s+- and - revisions left \(spent -\)$/m);
    expect(outcomeLine({ ...broken, status: 'completed' })).toBe('j completed (hops 1, spent -)');
  });

  it('tables pad every column but the last', () => {
    expect(table(['A', 'BB'], [['xyz', 1]])).toBe('A    BB\nxyz  1');
  });

  it('a progress line gives stage and ack, and the wallet only with the status it belongs to', () => {
    expect(progressLine(ack)).toBe('hop 2  draft      rejected_budget');
    expect(progressLine(ack, escalated)).toMatch(/rejected_budget\s+verdict none, \$0\.002 and 1 revision left$/);
  });

  it('a job waiting for a human says how to decide, in CLI spelling', () => {
    expect(outcomeLine(escalated)).toBe('j is waiting for a human: wallet has $0.002\n  decide with: handrail decide j approve|top-up --actor <you>');
  });

  it('an empty list says so', () => {
    expect(listText([])).toBe('no jobs match');
  });
});
