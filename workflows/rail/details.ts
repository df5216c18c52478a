/** The markdown an operator reads in the Web UI's "current details" of a job. */
import type { AckRecord } from '../../contracts';
import type { JobStatusView } from '../definitions';

// The Web UI's markdown reads `$…$` as maths: amounts inside free text are escaped.
const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/\$/g, '\\$').replace(/\n/g, ' ');

export function renderDetails(view: JobStatusView, acks: readonly AckRecord[]): string {
  const lines = [
    `**${view.status}** at \`${view.stage}\` · hops ${view.hops} · wallet USD ${view.usd_remaining} / ${view.revisions_remaining} revisions · spent USD ${view.spent_usd} · verdict ${view.last_verdict}`,
  ];
  if (view.escalation) {
    lines.push('', `**Waiting for a human** since ${view.escalation.since}: ${view.escalation.reasons.map(cell).join('; ')}`);
    lines.push(`Send the \`decide\` update with one of: ${view.escalation.options.map((o) => `\`${o}\``).join(', ')} (and an \`actor\`).`);
  }
  if (view.reason) lines.push('', `Ended: ${cell(view.reason)}`);
  lines.push('', '| hop | stage | ack | reason | actor |', '|---|---|---|---|---|');
  // The newest 30 acks keep the details readable and bounded; the `acks` query has them all.
  for (const a of acks.slice(-30)) {
    lines.push(`| ${a.hop} | ${a.stage} | ${a.ack}${a.invariant ? ` (${a.invariant})` : ''} | ${cell(a.reason).slice(0, 160)} | ${a.actor ?? ''} |`);
  }
  return lines.join('\n');
}
