/** Human-readable output of the CLI: aligned tables and one-line progress. Pure functions (colour
 * comes in as a `Paint`, plain unless the CLI writes to a terminal). */
import { splitSummary, type AckRecord, type EscalationRecord } from '../../../contracts';
import type { JobSummary } from '../summary';
import type { JobListing, JobStatusShown, JobView } from '../client';
import type { DecisionReceipt } from '../../../workflows/definitions';
import type { JobDiff, ReplayOutcome } from '../../replay';
import type { JobEvent } from '../../stream/events';
import { plain, type Paint } from './terminal';

/** Money as people read it: floating-point dust (0.30000000000000004) trimmed. Anything but a
 * finite number prints as `-`: a non-finite figure reaches the CLI as JSON `null`. */
export const usd = (n: number | undefined) =>
  typeof n === 'number' && Number.isFinite(n) ? `$${Number(n.toFixed(4))}` : '-';

/**
 * Columns padded to their widest cell; the last column is not padded. `style` (colour) wraps a
 * body cell's text, and the padding goes outside it, so escape codes never throw the columns off.
 */
export function table(
  columns: string[],
  rows: (string | number | undefined)[][],
  style?: (text: string, row: number, column: number) => string,
): string {
  const cells = [columns, ...rows.map((r) => r.map((c) => (c === undefined ? '' : String(c))))];
  const widths = columns.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? '').length)));
  return cells
    .map((r, n) =>
      r
        .map((c, i) => {
          const text = n > 0 && style ? style(c, n - 1, i) : c;
          return i === r.length - 1 ? text : text + ' '.repeat(widths[i]! - c.length);
        })
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

const ackLabel = (a: AckRecord) => `${a.ack}${a.invariant ? ` (${a.invariant})` : ''}`;

/** Every ack of a job, one row each; `paint` colours the ACK column (on a terminal). */
export function acksTable(acks: readonly AckRecord[], paint: Paint = plain): string {
  return table(
    ['HOP', 'STAGE', 'ACK', 'ACTOR', 'WALLET', 'REASON'],
    acks.map((a) => [a.hop, a.stage, ackLabel(a), a.actor ?? '', reservationText(a), a.reason]),
    (text, row, column) => (column === 2 ? paint(text, acks[row]!.ack) : text),
  );
}

/** An accepted hop's reservation and what it settled, e.g. `$0.004 → $0.002`. */
export const reservationText = (a: Pick<AckRecord, 'reserved_usd' | 'settled_usd'>): string =>
  a.reserved_usd === undefined
    ? ''
    : `${usd(a.reserved_usd)} → ${a.settled_usd === undefined ? '…' : usd(a.settled_usd)}`;

const revisions = (n: number) => `${Number.isSafeInteger(n) ? n : '-'} revision${n === 1 ? '' : 's'}`;

/**
 * One hop as a plain line: what `--follow` prints for every ack. The verdict and wallet are
 * given with the ack the status describes (`status` undefined for older ones).
 */
export function progressLine(ack: AckRecord, status?: JobStatusShown, paint: Paint = plain): string {
  const [before, label, after] = [
    `hop ${ack.hop}  ${ack.stage.padEnd(9)}  `,
    ackLabel(ack),
    ack.actor ? ` by ${ack.actor}` : '',
  ];
  const head = `${before}${paint(label, ack.ack)}${after}`;
  const width = before.length + label.length + after.length;
  return status
    ? `${head}${' '.repeat(Math.max(0, 40 - width))}  verdict ${status.last_verdict}, ${usd(status.usd_remaining)} and ${revisions(status.revisions_remaining)} left`
    : head;
}

/** The transient line redrawn on a TTY while a job runs. */
export function followLine(status: JobStatusShown, elapsedMs: number): string {
  return `… ${status.job_id}: ${status.status} at ${status.stage} · hop ${status.hops} · ${usd(status.usd_remaining)} left · ${(elapsedMs / 1000).toFixed(1)} s`;
}

/** How a followed job stopped, with what an operator can do next. */
export function outcomeLine(status: JobStatusShown): string {
  if (status.status === 'escalated' && status.escalation) {
    const call = status.escalation.tool_call;
    return call
      ? `${status.job_id} is waiting for a human's word on a tool call: ${toolCallText(call)}\n` +
          `  decide with: handrail decide ${status.job_id} approve --tool-call ${call.digest} [--deny --note WHY${call.editable ? ' | --args JSON' : ''}] --actor <you> (or reject)`
      : `${status.job_id} is waiting for a human: ${status.escalation.reasons.join('; ')}\n` +
          `  decide with: handrail decide ${status.job_id} ${status.escalation.options.map((o) => o.replace('_', '-')).join('|')} --actor <you>`;
  }
  return `${status.job_id} ${status.status}${status.reason ? `: ${status.reason}` : ''} (hops ${status.hops}, spent ${usd(status.spent_usd)})`;
}

export function statusText(status: JobStatusShown): string {
  const rows: [string, string][] = [
    ['job', status.job_id],
    ['status', status.status],
    ['stage', status.stage],
    ['hops', String(status.hops)],
    [
      'wallet',
      `${usd(status.usd_remaining)} and ${revisions(status.revisions_remaining)} left (spent ${usd(status.spent_usd)})`,
    ],
    ['verdict', status.last_verdict],
  ];
  if (status.reserved_usd > 0)
    rows.splice(5, 0, [
      'reserved',
      `${usd(status.reserved_usd)} by ${status.reservations.map((r) => `${r.stage} ${usd(r.usd)}`).join(', ')}`,
    ]);
  if (status.last_ack)
    rows.push(['last ack', `${ackLabel(status.last_ack)} at ${status.last_ack.stage} (hop ${status.last_ack.hop})`]);
  if (status.escalation) {
    rows.push(['waiting', `since ${status.escalation.since}: ${status.escalation.reasons.join('; ')}`]);
    rows.push(['options', status.escalation.options.map((o) => o.replace('_', '-')).join(', ')]);
    const call = status.escalation.tool_call;
    if (call) rows.push(['tool call', `${toolCallText(call)} · digest ${call.digest}`]);
  }
  if (status.reason) rows.push(['reason', status.reason]);
  const width = Math.max(...rows.map(([k]) => k.length));
  return rows.map(([k, v]) => `${k.padEnd(width)}  ${v}`).join('\n');
}

/** The summary's segments, numbered oldest first (one per stage that ran). */
export function summaryText(summary: JobSummary): string {
  const n = summary.segments.length;
  if (n === 0) return 'Summary: none yet';
  const head = summary.unreadable
    ? `Summary (the package's ${n} segments; earlier ones unreadable: ${summary.unreadable})`
    : `Summary (${n} segment${n === 1 ? '' : 's'})`;
  const width = String(n).length;
  return [
    head,
    ...summary.segments.map((s, i) => `${String(i + 1).padStart(width)}. ${s.replace(/\n/g, '\n    ')}`),
  ].join('\n');
}

/** `show`: status, the package as it stands, its summary and every ack. `summary`: the segments
 * as read through the store; without it, the package's own. */
export function jobText(
  view: JobView,
  url: string,
  summary: JobSummary = { segments: splitSummary(view.package.summary) },
  paint: Paint = plain,
): string {
  const pkg = view.package;
  const sections = [
    statusText(view.status),
    `run       ${view.run_status.toLowerCase()} on task queue ${view.task_queue}, started ${view.started_at}${view.closed_at ? `, closed ${view.closed_at}` : ''}`,
    '',
    `Package (${pkg.schema})`,
    `goal         ${pkg.goal}`,
    `constraints  ${pkg.constraints.join('; ') || 'none'}`,
    `evaluator    ${pkg.evaluator.last_verdict}${pkg.evaluator.failures.length ? `: ${pkg.evaluator.failures.join('; ')}` : ''}`,
    `budget       ${usd(pkg.budget.usd_remaining)} and ${revisions(pkg.budget.revisions_remaining)} left`,
    ...(pkg.hop
      ? [
          `hop          ${pkg.hop.count}: ${pkg.hop.from} → ${pkg.hop.to}${pkg.hop.handoff_reason ? ` (${pkg.hop.handoff_reason})` : ''}: ${pkg.hop.reason}`,
        ]
      : []),
    `trace        ${pkg.trace.traceparent}`,
    ...(pkg.open_questions.length ? [`questions    ${pkg.open_questions.join('; ')}`] : []),
    '',
    table(
      ['ARTIFACT', 'URI'],
      pkg.artifacts.map((a) => [a.type, a.uri.length > 90 ? `${a.uri.slice(0, 87)}...` : a.uri]),
    ),
    '',
    summaryText(summary),
    '',
    `Acks (${view.acks.length})`,
    acksTable(view.acks, paint),
    ...(view.result?.receipt
      ? [
          '',
          `receipt  ${view.result.receipt.write_key} → ${view.result.receipt.system} ${view.result.receipt.reference} (${view.result.receipt.status})`,
        ]
      : []),
    '',
    `Web UI: ${url}`,
  ];
  return sections.join('\n');
}

export function listText(jobs: readonly JobListing[], paint: Paint = plain): string {
  if (jobs.length === 0) return 'no jobs match';
  return table(
    ['JOB', 'STATUS', 'STAGE', 'ACK', 'VERDICT', 'HOPS', 'WALLET', 'STARTED'],
    jobs.map((j) => [
      j.job_id,
      j.status,
      j.stage,
      j.ack,
      j.verdict,
      j.hops,
      usd(j.usd_remaining),
      j.started_at.replace(/\.\d+Z$/, 'Z'),
    ]),
    (text, row, column) => (column === 3 ? paint(text, jobs[row]!.ack) : text),
  );
}

export function receiptText(jobId: string, receipt: DecisionReceipt): string {
  return `${jobId}: ${receipt.action.replace('_', '-')} by ${receipt.actor}; ${receipt.next}`;
}

const oneLine = (s: string, max: number) => {
  const flat = s.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
};

/** `handoffs list`: one record per line, newest first (as the API lists them). */
export function handoffsText(records: readonly EscalationRecord[]): string {
  if (records.length === 0) return 'no handoff records match';
  return table(
    ['RECORD', 'PROJECT', 'JOB', 'STATE', 'OWNER', 'TAKEN BY', 'CREATED', 'SUMMARY'],
    records.map((r) => [
      r.id,
      r.project,
      r.job_id,
      r.state,
      r.owner ?? '-',
      r.accepted_by ?? '-',
      r.created_at.replace(/\.\d+Z$/, 'Z'),
      oneLine(r.summary, 60),
    ]),
  );
}

/** `handoffs show`: the record, its questions and next steps, and who moved it when. */
export function handoffText(r: EscalationRecord): string {
  const rows: [string, string][] = [
    ['record', r.id],
    ['where', `${r.workspace} / ${r.project}`],
    ['job', r.job_id],
    ['state', `${r.state}${r.close_reason ? ` (${r.close_reason})` : ''}`],
    ['owner', r.owner ?? '- (any API user)'],
    ['created', `${r.created_at} by ${r.created_by}`],
  ];
  if (r.accepted_by) rows.push(['taken', `${r.accepted_at} by ${r.accepted_by}`]);
  if (r.cancelled_by) rows.push(['cancelled', `${r.cancelled_at} by ${r.cancelled_by}`]);
  if (r.closed_at) rows.push(['closed', r.closed_at]);
  const width = Math.max(...rows.map(([k]) => k.length));
  const list = (title: string, items: readonly string[]) =>
    items.length ? ['', `${title}:`, ...items.map((i) => `  - ${i}`)] : [];
  return [
    ...rows.map(([k, v]) => `${k.padEnd(width)}  ${v}`),
    '',
    'Summary:',
    r.summary,
    ...list('Open questions', r.open_questions),
    ...list('Next steps', r.next_steps),
  ].join('\n');
}

/** `replay`: one history's outcome; a failure adds the code's command, core's reason and a hint. */
export function replayLine(outcome: ReplayOutcome): string {
  const name = outcome.history === outcome.workflowId ? outcome.history : `${outcome.history} (${outcome.workflowId})`;
  if (outcome.ok) return `pass  ${name}`;
  const event =
    outcome.eventId === undefined ? undefined : `event ${outcome.eventId}${outcome.event ? ` (${outcome.event})` : ''}`;
  const what = outcome.command
    ? `the code issues ${outcome.command}${event ? ` at ${event}` : ''}`
    : event
      ? `${event} has no matching command`
      : outcome.error;
  return [`FAIL  ${name}: ${what}`, `      ${outcome.error}: ${outcome.message}`, `      hint: ${outcome.hint}`].join(
    '\n',
  );
}

export function replaySummary(outcomes: readonly ReplayOutcome[]): string {
  const failed = outcomes.filter((o) => !o.ok).length;
  return `replayed ${outcomes.length} histor${outcomes.length === 1 ? 'y' : 'ies'}: ${outcomes.length - failed} passed, ${failed} failed`;
}

/** `replay --diff`: one job's first hop that differs (what, recorded → now), or `same`, and what was not compared. */
export function diffLine(diff: JobDiff): string {
  const name = diff.history === diff.workflowId ? diff.history : `${diff.history} (${diff.workflowId})`;
  const notes = diff.notes.map((n) => `      note: ${n}`);
  if (!diff.pipeline) return [`skip  ${name}`, ...notes].join('\n');
  if (!diff.first)
    return [`same  ${name}: ${diff.hops} hop${diff.hops === 1 ? '' : 's'} as recorded`, ...notes].join('\n');
  const { hop, stage, differences } = diff.first;
  const rows = table(
    ['', 'WHAT', 'RECORDED', 'NOW'],
    differences.map((d) => ['     ', d.what, d.recorded, d.now]),
  );
  return [`DIFF  ${name}: hop ${hop} (${stage})`, rows, ...notes].join('\n');
}

export function diffSummary(diffs: readonly JobDiff[]): string {
  const differ = diffs.filter((d) => d.first).length;
  const skipped = diffs.filter((d) => !d.pipeline).length;
  return `diffed ${diffs.length} histor${diffs.length === 1 ? 'y' : 'ies'}: ${diffs.length - differ - skipped} as recorded, ${differ} differ${skipped ? `, ${skipped} skipped` : ''}`;
}

/** Model text as a terminal may show it: no escape sequences or control characters (a model's
 * text must not move the cursor or recolour what an operator reads), newlines and tabs kept. */
export function terminalSafe(text: string): string {
  return text.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g, '');
}

/** One event of `handrail follow` as text: undefined for model text (written as it comes). */
export function streamEventLine(event: JobEvent, paint: Paint = plain): string | undefined {
  switch (event.type) {
    case 'job_started':
      return `following ${event.job_id}`;
    case 'hop_started':
      return `hop ${event.hop}  ${event.stage.padEnd(9)}  working (reserved ${usd(event.reserved_usd)})`;
    case 'ack':
    case 'decision':
      return `${progressLine(event.ack as AckRecord, undefined, paint)} — ${terminalSafe(event.ack.reason)}${event.ack.settled_usd !== undefined ? ` (${usd(event.ack.settled_usd)})` : ''}`;
    case 'escalated':
      return event.escalation.tool_call
        ? `waiting for a human's word on a tool call: ${toolCallText(event.escalation.tool_call)} (digest ${event.escalation.tool_call.digest})`
        : `waiting for a human: ${terminalSafe(event.escalation.reasons.join('; '))} (decide: ${terminalSafe(event.escalation.options.join(', '))})`;
    case 'hop_finished':
      return undefined;
    case 'job_continued':
      return `continued as new: run ${event.run}`;
    case 'job_finished':
      return `finished ${event.status}${event.reason ? `: ${terminalSafe(event.reason)}` : ''}`;
    case 'text_delta':
      return undefined;
    case 'tool_call':
      return event.phase === 'start'
        ? `hop ${event.hop}  ${event.stage.padEnd(9)}  calls ${terminalSafe(event.name)}${event.args !== undefined ? ` ${terminalSafe(JSON.stringify(event.args)).slice(0, 200)}` : ''}`
        : `hop ${event.hop}  ${event.stage.padEnd(9)}  ${terminalSafe(event.name)} ${event.ok ? 'answered' : 'failed'}`;
  }
}

/** A tool call waiting for a human, as a terminal shows it: its name and arguments are the
 * model's, so control and bidirectional characters are taken out, and long arguments cut. */
function toolCallText(call: { name: string; args: unknown }): string {
  const args = JSON.stringify(call.args ?? null);
  return terminalSafe(`${call.name} ${args.length > 400 ? `${args.slice(0, 400)}…` : args}`);
}
