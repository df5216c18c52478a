/** The markdown an operator reads in the Web UI's "current details" of a job. */
import { neutraliseBidi, type AckInDoubt, type AckRecord } from '../../contracts/rail';
import type { JobStatusView } from '../definitions';

// The Web UI's markdown reads `$…$` as maths: amounts inside free text are escaped. Free text may
// quote a stage or a job's entry, so a bidi override in it must not reorder what the operator reads.
const cell = (s: string) => neutraliseBidi(s).replace(/\|/g, '\\|').replace(/\$/g, '\\$').replace(/\n/g, ' ');

/** What one hop's stage was handed over its edge, and the job's log after its turn. */
export interface HandoverLine {
  hop: number;
  stage: string;
  /** The handover used (after any overflow fallback); undefined: only the package. */
  used?: string;
  tokens?: number;
  fell_back?: boolean;
  /** URI of the job's log after this hop (`handrail transcript <job>` prints it). */
  transcript?: string;
}

export function renderDetails(
  view: JobStatusView,
  acks: readonly AckRecord[],
  handovers: readonly HandoverLine[] = [],
): string {
  const lines = [
    `**${view.status}** at \`${view.stage}\` · hops ${view.hops} · wallet USD ${view.usd_remaining} / ${view.revisions_remaining} revisions · spent USD ${view.spent_usd} · verdict ${view.last_verdict}`,
  ];
  if (view.reserved_usd > 0)
    lines.push(
      '',
      `Reserved USD ${view.reserved_usd} by running hops: ${view.reservations.map((r) => `${r.stage} ${r.usd}`).join(', ')}`,
    );
  if (view.escalation) {
    lines.push(
      '',
      `**Waiting for a human** since ${view.escalation.since}: ${view.escalation.reasons.map(cell).join('; ')}`,
    );
    lines.push(
      `Send the \`decide\` update with one of: ${view.escalation.options.map((o) => `\`${o}\``).join(', ')} (and an \`actor\`).`,
    );
  }
  if (view.reason) lines.push('', `Ended: ${cell(view.reason)}`);
  lines.push('', '| hop | stage | ack | reason | reserved → settled (USD) | actor |', '|---|---|---|---|---|---|');
  // The newest 30 acks keep the details readable and bounded; the `acks` query has them all.
  for (const a of acks.slice(-30)) {
    const wallet = a.reserved_usd === undefined ? '' : `${a.reserved_usd} → ${a.settled_usd ?? '…'}`;
    lines.push(
      `| ${a.hop} | ${a.stage} | ${a.ack}${a.invariant ? ` (${a.invariant})` : ''}${a.in_doubt ? ` · ${cell(describeInDoubt(a.in_doubt))}` : ''} | ${cell(a.reason).slice(0, 160)} | ${wallet} | ${a.actor ?? ''} |`,
    );
  }
  if (handovers.length > 0) {
    lines.push(
      '',
      '**Handover** (what each stage saw of the conversation; `handrail transcript <job> --stage S` prints it). The log after each hop is `handrail://transcripts/<job>/<turn>`:',
      '',
      '| hop | stage | handover | turn |',
      '|---|---|---|---|',
    );
    for (const h of handovers.slice(-30)) {
      const used =
        h.used === undefined
          ? 'package only'
          : `${h.used}${h.fell_back ? ' (over the cap: fell back)' : ''} · ${h.tokens ?? 0} tokens`;
      // The turn's sha, shortened like a commit's: the whole URI does not fit the Web UI's column.
      const turn = h.transcript?.split('/').pop()?.slice(0, 12);
      lines.push(`| ${h.hop} | ${h.stage} | ${cell(used)} | ${turn ? `\`${turn}…\`` : ''} |`);
    }
  }
  return lines.join('\n');
}

const SAID: Record<AckInDoubt['resolution'], string> = {
  escalated: 'escalated to a human',
  resent: 'resent with its key',
  found_by_lookup: 'found by a lookup',
  sent_after_lookup: 'not found by a lookup, sent',
  human_happened: 'a human said it happened',
  human_send: 'a human said send it',
};

/** One line for an operator: `write in doubt: a human said it happened (pay_1), 1 send`. */
export function describeInDoubt(d: AckInDoubt): string {
  const sends = d.sends === undefined ? '' : `, ${d.sends} send${d.sends === 1 ? '' : 's'}`;
  return `write in doubt: ${SAID[d.resolution]}${d.reference ? ` (${d.reference})` : ''}${sends}`;
}
