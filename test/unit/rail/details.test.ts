import { describe, expect, it } from 'vitest';
import type { AckRecord } from '../../../contracts';
import type { JobStatusView } from '../../../workflows/definitions';
import { describeInDoubt, renderDetails } from '../../../workflows/rail/details';
import { fixturePackage } from './helpers';

const ack = (hop: number, over: Partial<AckRecord> = {}): AckRecord => ({ ...fixturePackage().ack!, hop, ...over });
const view: JobStatusView = {
  job_id: 'tkt_18422',
  status: 'running',
  stage: 'judge',
  hops: 3,
  usd_remaining: 1.2,
  revisions_remaining: 2,
  spent_usd: 0.013,
  reserved_usd: 0,
  reservations: [],
  last_verdict: 'none',
};
const tableRows = (md: string) => md.split('\n').filter((l) => /^\| \d+ \|/.test(l));

describe('renderDetails', () => {
  it('states status, stage, hops, wallet and verdict in the first line', () => {
    expect(renderDetails(view, []).split('\n')[0]).toBe(
      '**running** at `judge` · hops 3 · wallet USD 1.2 / 2 revisions · spent USD 0.013 · verdict none',
    );
  });

  it('lists the escalation and the decisions it accepts', () => {
    const md = renderDetails(
      {
        ...view,
        status: 'escalated',
        escalation: {
          reasons: ['wallet empty'],
          blocked: 'judge',
          options: ['approve', 'reject', 'top_up'],
          since: '2026-01-01T00:00:00.000Z',
        },
      },
      [],
    );
    expect(md).toContain('**Waiting for a human** since 2026-01-01T00:00:00.000Z: wallet empty');
    expect(md).toContain('`approve`, `reject`, `top_up`');
  });

  it('keeps a reason with pipes and newlines inside its table cell', () => {
    const rows = tableRows(renderDetails(view, [ack(1, { reason: 'a | b\nc' })]));
    expect(rows).toHaveLength(1);
    expect(rows[0]).toContain('a \\| b c');
  });

  it('names the invariant of a rejected_invariant ack', () => {
    const md = renderDetails(view, [ack(4, { ack: 'rejected_invariant', invariant: 'no_artifact_reuse' })]);
    expect(tableRows(md)[0]).toContain('rejected_invariant (no_artifact_reuse)');
  });

  it('shows only the newest 30 acks', () => {
    const acks = Array.from({ length: 40 }, (_, i) => ack(i));
    const rows = tableRows(renderDetails(view, acks));
    expect(rows).toHaveLength(30);
    expect(rows[0]!.startsWith('| 10 |')).toBe(true);
    expect(rows[29]!.startsWith('| 39 |')).toBe(true);
  });
});

describe('renderDetails: markdown safety', () => {
  it('shows a bidi override in an ack reason as U+FFFD, so the reason reads as written', () => {
    const md = renderDetails(view, [
      ack(1, { reason: 'decided top_up by ana: refund \u202e000,01 ot pu \u2066x\u2069' }),
    ]);
    expect(tableRows(md)[0]).toContain('refund \uFFFD000,01 ot pu \uFFFDx\uFFFD');
    expect(md).not.toMatch(/[\u202a-\u202e\u2066-\u2069]/u);
  });

  it('escapes dollar signs in ack reasons so the Web UI does not read them as maths', () => {
    const md = renderDetails(
      {
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
      },
      [
        {
          ack: 'rejected_budget',
          stage: 'draft',
          hop: 2,
          reason: 'wallet has $0.002; "draft" costs $0.01',
          delivery_key: 'j:draft:3',
          traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
          at: '2026-11-29T00:00:00.000Z',
        },
      ],
    );
    expect(md).toContain('wallet has \\$0.002; "draft" costs \\$0.01');
    expect(md).not.toMatch(/(^|[^\\])\$\d/);
  });

  it('shows which handover each hop used, with its tokens and the transcript URI; none when no stage ran', () => {
    expect(renderDetails(view, [])).not.toContain('**Handover**');
    const md = renderDetails(
      view,
      [ack(1)],
      [
        { hop: 1, stage: 'intake', transcript: `handrail://transcripts/tkt_18422/${'a'.repeat(12)}${'0'.repeat(52)}` },
        {
          hop: 3,
          stage: 'draft',
          used: 'transcript_materialize',
          tokens: 212,
          fell_back: true,
          transcript: `handrail://transcripts/tkt_18422/${'b'.repeat(64)}`,
        },
      ],
    );
    expect(md).toContain('The log after each hop is `handrail://transcripts/<job>/<turn>`');
    expect(md).toContain(`| 1 | intake | package only | \`${'a'.repeat(12)}…\` |`);
    expect(md).toContain(
      `| 3 | draft | transcript_materialize (over the cap: fell back) · 212 tokens | \`${'b'.repeat(12)}…\` |`,
    );
  });
});

describe('a write in doubt in the details', () => {
  it('says on the ack where the write stands: escalated, the human’s word, how the retried writer settled it', () => {
    const md = renderDetails(view, [
      ack(5, {
        stage: 'writeback',
        in_doubt: { resolution: 'escalated', write_key: 'tkt_18422:writeback:receipt.v1' },
      }),
      ack(6, { stage: 'human', in_doubt: { resolution: 'human_happened', reference: 'pay_7' } }),
      ack(7, { stage: 'writeback', in_doubt: { resolution: 'human_happened', reference: 'pay_7', sends: 1 } }),
    ]);
    expect(tableRows(md).map((row) => row.split(' | ')[2])).toEqual([
      'accepted · write in doubt: escalated to a human',
      'accepted · write in doubt: a human said it happened (pay_7)',
      'accepted · write in doubt: a human said it happened (pay_7), 1 send',
    ]);
  });

  it.each([
    [{ resolution: 'resent', sends: 2 }, 'write in doubt: resent with its key, 2 sends'],
    [
      { resolution: 'found_by_lookup', reference: 'pay_1', sends: 1 },
      'write in doubt: found by a lookup (pay_1), 1 send',
    ],
    [
      { resolution: 'sent_after_lookup', reference: 'pay_2', sends: 2 },
      'write in doubt: not found by a lookup, sent (pay_2), 2 sends',
    ],
    [{ resolution: 'human_send' }, 'write in doubt: a human said send it'],
  ] as const)('%j reads %s', (inDoubt, line) => {
    expect(describeInDoubt(inDoubt)).toBe(line);
  });
});
