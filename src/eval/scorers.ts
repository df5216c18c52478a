/**
 * The built-in scorers: pure functions of one job. A rate's scorer gives 0 or 1 (or a fraction)
 * per job, so its mean over a run is the rate; undefined means "does not apply" and is left out
 * of the mean (a job without a critic has no pass rate).
 */
import { canonicalJson } from '../../contracts';
import type { EvalJob, Scorer } from './types';

const flag = (yes: boolean): number => (yes ? 1 : 0);
const anyAck = (job: EvalJob, ack: string): number => flag(job.acks.some((a) => a.ack === ack));

/** The text a writer wrote: a markdown body's markdown, else the body's canonical JSON. */
export function writtenText(body: unknown): string {
  const markdown = (body as { markdown?: unknown } | null | undefined)?.markdown;
  return typeof markdown === 'string' ? markdown : typeof body === 'string' ? body : canonicalJson(body ?? null);
}

/** Whether the written content holds what the entry expects of it; undefined when it expects nothing. */
export function writeMatches(job: EvalJob): number | undefined {
  const expected = job.expect?.write;
  if (!expected) return undefined;
  if (job.written === undefined) return 0;
  const text = writtenText(job.written).toLowerCase();
  const holds =
    (expected.contains ?? []).every((t) => text.includes(t.toLowerCase())) &&
    !(expected.absent ?? []).some((t) => text.includes(t.toLowerCase())) &&
    (expected.matches === undefined || new RegExp(expected.matches, 'i').test(writtenText(job.written)));
  return flag(holds);
}

function tokens(job: EvalJob): number | undefined {
  const reported = job.artifacts.filter((a) => a.tokens !== undefined);
  return reported.length > 0 ? reported.reduce((sum, a) => sum + a.tokens!, 0) : undefined;
}

function revisionsUsed(job: EvalJob): number | undefined {
  const left = job.package?.budget.revisions_remaining;
  if (left === undefined) return undefined;
  // A human's top-up adds revisions: the used ones are never fewer than the revise verdicts.
  return Math.max(job.request.budget.revisions - left, job.verdicts.slice(0, -1).filter((v) => v === 'fail').length);
}

/** A micro-dollar-rounded sum, so float noise never reads as a cost change. */
const micros = (usd: number) => Math.round(usd * 1e6) / 1e6;

export const BUILT_IN_SCORERS: readonly Scorer[] = [
  {
    name: 'completed',
    description: 'the job completed',
    unit: 'rate',
    score: (j) => flag(j.status === 'completed'),
  },
  {
    name: 'escalated',
    description: 'the job ended escalated (or waits for a human)',
    unit: 'rate',
    score: (j) => flag(j.status === 'escalated'),
  },
  {
    name: 'rejected',
    description: 'the job ended rejected',
    unit: 'rate',
    score: (j) => flag(j.status === 'rejected'),
  },
  {
    name: 'pass_rate',
    description: "the share of the critic's verdicts that passed (jobs a critic judged)",
    unit: 'rate',
    score: (j) => (j.verdicts.length ? j.verdicts.filter((v) => v === 'pass').length / j.verdicts.length : undefined),
  },
  {
    name: 'final_pass',
    description: "the critic's last verdict passed (jobs a critic judged)",
    unit: 'rate',
    score: (j) => (j.verdicts.length ? flag(j.verdicts.at(-1) === 'pass') : undefined),
  },
  { name: 'revisions_used', description: 'revisions the job spent', unit: 'count', score: revisionsUsed },
  {
    name: 'hops',
    description: 'hops the job took',
    unit: 'count',
    score: (j) => j.result?.hops ?? j.path.length,
  },
  {
    name: 'cost_per_job',
    description: 'what the job spent (USD)',
    unit: 'usd',
    score: (j) => micros(j.result?.spent_usd ?? j.artifacts.reduce((sum, a) => sum + a.cost_usd, 0)),
  },
  { name: 'tokens', description: 'tokens its stages reported', unit: 'tokens', score: tokens },
  { name: 'latency_ms', description: 'first event to last', unit: 'ms', score: (j) => j.latency_ms },
  {
    name: 'no_progress',
    description: 'the rail stopped a loop that made no progress',
    unit: 'rate',
    score: (j) => anyAck(j, 'no_progress'),
  },
  { name: 'cycle', description: 'the rail detected a cycle', unit: 'rate', score: (j) => anyAck(j, 'cycle_detected') },
  {
    name: 'written',
    description: 'a writer wrote (the job carries a receipt)',
    unit: 'rate',
    score: (j) => flag(j.result?.receipt !== undefined || j.artifacts.some((a) => a.type === 'receipt.v1')),
  },
  {
    name: 'write_expected',
    description: 'the written content holds what the entry expects (entries with expect.write)',
    unit: 'rate',
    score: writeMatches,
  },
  {
    name: 'status_expected',
    description: 'the job ended as the entry expects (entries with expect.status)',
    unit: 'rate',
    score: (j) => (j.expect?.status ? flag(j.status === j.expect.status) : undefined),
  },
  {
    name: 'route_expected',
    description: 'the job visited every stage the entry expects (entries with expect.visits)',
    unit: 'rate',
    score: (j) => (j.expect?.visits ? flag(j.expect.visits.every((s) => j.path.includes(s))) : undefined),
  },
  {
    name: 'replay_moved',
    description: 'replayed through the current code, a hop differs (recorded jobs with --replay)',
    unit: 'rate',
    score: (j) => (j.replay ? flag(j.replay.moved !== undefined) : undefined),
  },
  {
    name: 'approvals_asked',
    description: 'tool calls that waited for a human (per-call approval)',
    unit: 'count',
    score: (j) => asked(j).length,
  },
  {
    name: 'approvals_approved',
    description: 'tool calls a human let run',
    unit: 'count',
    score: (j) => words(j).filter((a) => a.tool_call!.verdict === 'approve').length,
  },
  {
    name: 'approvals_denied',
    description: 'tool calls a human denied',
    unit: 'count',
    score: (j) => words(j).filter((a) => a.tool_call!.verdict === 'deny').length,
  },
  {
    name: 'approval_wait_ms',
    description: 'time tool calls waited for a human, in all (jobs that asked)',
    unit: 'ms',
    score: approvalWaitMs,
  },
];

/** The human hops that asked about a tool call, and those that gave a word on one. */
const asked = (j: EvalJob) => j.acks.filter((a) => a.tool_call && a.tool_call.verdict === undefined && !a.actor);
const words = (j: EvalJob) => j.acks.filter((a) => a.tool_call?.verdict !== undefined);

/** From each call's escalation to the word on it (the same digest), summed; undefined when none asked. */
function approvalWaitMs(j: EvalJob): number | undefined {
  const waits = asked(j);
  if (waits.length === 0) return undefined;
  let total = 0;
  for (const w of waits) {
    const word = words(j).find((a) => a.tool_call!.digest === w.tool_call!.digest);
    if (word) total += Date.parse(word.at) - Date.parse(w.at);
  }
  return total;
}

/** Every scorer's value for the job; a scorer that throws names itself in the error. */
export async function scoreJob(job: EvalJob, scorers: readonly Scorer[]): Promise<Record<string, number>> {
  const scores: Record<string, number> = {};
  for (const scorer of scorers) {
    let value: number | undefined;
    try {
      value = await scorer.score(job);
    } catch (err) {
      throw new ScorerError(scorer.name, job.job_id, (err as Error).message);
    }
    if (value === undefined) continue;
    if (typeof value !== 'number' || !Number.isFinite(value))
      throw new ScorerError(scorer.name, job.job_id, `returned ${String(value)}, not a finite number or undefined`);
    scores[scorer.name] = value;
  }
  return scores;
}

export class ScorerError extends Error {
  override readonly name = 'ScorerError';
  constructor(
    readonly scorer: string,
    readonly jobId: string,
    why: string,
  ) {
    super(`scorer ${scorer} on job ${jobId}: ${why}`);
  }
}
