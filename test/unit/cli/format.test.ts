import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { AckRecord } from '../../../contracts';
import {
  acksTable,
  diffLine,
  diffSummary,
  listText,
  outcomeLine,
  progressLine,
  statusText,
  table,
  usd,
} from '../../../src/operator/cli/format';
import type { JobStatusView } from '../../../workflows/definitions';
import { paintFor } from '../../../src/operator/cli/terminal';

const ack: AckRecord = {
  ack: 'rejected_budget',
  stage: 'draft',
  hop: 2,
  reason: 'wallet has $0.002',
  delivery_key: 'j:draft:2',
  traceparent: `00-${'a'.repeat(32)}-${'b'.repeat(16)}-01`,
  at: '2026-01-01T00:00:00Z',
};
const escalated: JobStatusView = {
  job_id: 'j',
  status: 'escalated',
  stage: 'human',
  hops: 1,
  usd_remaining: 0.002,
  revisions_remaining: 1,
  spent_usd: 0.003,
  reserved_usd: 0,
  reservations: [],
  last_verdict: 'none',
  escalation: {
    reasons: ['wallet has $0.002'],
    blocked: 'draft',
    options: ['approve', 'top_up'],
    since: '2026-01-01T00:00:00Z',
  },
};

describe('CLI output', () => {
  it('money drops floating-point dust', () => {
    expect(usd(0.1 + 0.2)).toBe('$0.3');
    expect(usd(undefined)).toBe('-');
  });

  it('money that is not a finite number (JSON turns Infinity into null) prints as - instead of throwing', () => {
    for (const n of [null, Infinity, Number.NaN]) expect(usd(n as number)).toBe('-');
    const broken = {
      ...escalated,
      usd_remaining: null,
      revisions_remaining: null,
      spent_usd: null,
    } as unknown as JobStatusView;
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
    expect(outcomeLine(escalated)).toBe(
      'j is waiting for a human: wallet has $0.002\n  decide with: handrail decide j approve|top-up --actor <you>',
    );
  });

  it("a job waiting on a tool call shows the call (the model's words made terminal-safe) and how to decide it by digest", () => {
    const digest = `sha256:${'ab'.repeat(32)}`;
    const onCall: JobStatusView = {
      ...escalated,
      escalation: {
        ...escalated.escalation!,
        options: ['approve', 'reject'],
        tool_call: { name: 'post\u202enote', call_id: 'c1', args: { text: 'hi\u001b[2J' }, digest },
      },
    };
    expect(outcomeLine(onCall)).toBe(
      `j is waiting for a human's word on a tool call: postnote {"text":"hi\\u001b[2J"}\n` +
        `  decide with: handrail decide j approve --tool-call ${digest} [--deny --note WHY] --actor <you> (or reject)`,
    );
    expect(statusText(onCall)).toMatch(
      new RegExp(`^tool call\\s+postnote \\{"text":"hi\\\\u001b\\[2J"\\} · digest ${digest}$`, 'm'),
    );
  });

  it('an empty list says so', () => {
    expect(listText([])).toBe('no jobs match');
  });

  it('replay --diff: a job as recorded, one that differs (what, recorded, now), one skipped, and the count', () => {
    const same = { history: 'a.json', workflowId: 'j1', pipeline: 'ticket-triage', hops: 5, notes: [] };
    const moved = {
      history: 'j2',
      workflowId: 'j2',
      pipeline: 'ticket-triage',
      hops: 4,
      notes: [],
      first: {
        hop: 3,
        stage: 'judge',
        differences: [{ what: 'route' as const, recorded: 'judge', now: 'complete (done)' }],
      },
    };
    const skipped = {
      history: 'b.json',
      workflowId: 'j3',
      hops: 0,
      notes: ['not a handoffJob history: nothing to diff'],
    };
    expect(diffLine(same)).toBe('same  a.json (j1): 5 hops as recorded');
    expect(diffLine(moved).split('\n')).toEqual([
      'DIFF  j2: hop 3 (judge)',
      '       WHAT   RECORDED  NOW',
      '       route  judge     complete (done)',
    ]);
    expect(diffLine(skipped)).toBe('skip  b.json (j3)\n      note: not a handoffJob history: nothing to diff');
    expect(diffSummary([same, moved, skipped])).toBe('diffed 3 histories: 1 as recorded, 1 differ, 1 skipped');
  });

  it('colour goes inside the padding: a coloured acks table lines up like the plain one', () => {
    const acks: AckRecord[] = [{ ...ack, ack: 'accepted', hop: 1, stage: 'retrieve' }, ack];
    const tty = Object.assign(new PassThrough(), { isTTY: true });
    const coloured = acksTable(acks, paintFor(tty, {}));
    expect(coloured).toContain('\x1b[32maccepted\x1b[39m');
    expect(coloured.replace(/\x1b\[\d+m/g, '')).toBe(acksTable(acks));
    expect(
      acksTable(acks)
        .split('\n')
        .map((l) => l.indexOf('wallet has')),
    ).toEqual([-1, 47, 47]);
  });
});
