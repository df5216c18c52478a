/**
 * `handrail start <file>`: the file holds a raw ticket (`{id, customer_id, subject, body, ...}`)
 * or a whole JobRequest (`{job_id, entry, goal, ...}`, or `ticket` for the entry as older requests
 * carried it); flags fill in or override the rest.
 */
import type { JobRequest } from '../../../contracts';
import { BUILT_IN_PIPELINES } from '../../../contracts/pipelines';
import { InvalidJobRequestError, parseJobRequest } from '../client';
import type { StartFlags } from './args';

/** What a bare ticket gets when the flags say nothing: the reference triage job. */
export const DEFAULT_JOB = {
  goal: 'Draft internal triage summary; do not send to customer',
  constraints: ['no refund promises', 'cite help center or no_match'],
  budget: { usd: 1, revisions: 2 },
} as const;

/** A ticket file the contract refuses; `fields` name the offending fields as the file spells them. */
export class InvalidTicketFileError extends Error {
  override readonly name = 'InvalidTicketFileError';
  constructor(
    readonly source: string,
    readonly fields: { path: string; message: string }[],
  ) {
    super(
      `invalid ticket file ${source}: ${fields.map((f) => (f.path ? `field "${f.path}": ${f.message}` : f.message)).join('; ')}`,
    );
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export function jobRequestFromFile(text: string, source: string, flags: StartFlags): JobRequest {
  let content: unknown;
  try {
    // Editors on Windows save UTF-8 with a byte-order mark, which JSON.parse refuses.
    content = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch (err) {
    throw new InvalidTicketFileError(source, [{ path: '', message: `not valid JSON (${(err as Error).message})` }]);
  }
  if (!isObject(content))
    throw new InvalidTicketFileError(source, [
      { path: '', message: 'expected a JSON object (a ticket or a job request)' },
    ]);

  const bareTicket = !('ticket' in content) && !('entry' in content);
  const base: Record<string, unknown> = bareTicket
    ? {
        job_id: content.id,
        entry: content,
        goal: DEFAULT_JOB.goal,
        constraints: [...DEFAULT_JOB.constraints],
        budget: { ...DEFAULT_JOB.budget },
      }
    : content;
  const budget = isObject(base.budget) ? base.budget : {};
  const request = {
    ...base,
    ...(flags.jobId !== undefined ? { job_id: flags.jobId } : {}),
    ...(flags.pipeline !== undefined ? { pipeline: flags.pipeline } : {}),
    ...(flags.goal !== undefined ? { goal: flags.goal } : {}),
    ...(flags.constraints !== undefined ? { constraints: flags.constraints } : {}),
    ...(flags.maxHops !== undefined ? { max_hops: flags.maxHops } : {}),
    ...(flags.decisionTimeout !== undefined ? { decision_timeout: flags.decisionTimeout } : {}),
    ...(flags.owner !== undefined ? { owner: flags.owner } : {}),
    budget: {
      ...budget,
      ...(flags.budgetUsd !== undefined ? { usd: flags.budgetUsd } : {}),
      ...(flags.revisions !== undefined ? { revisions: flags.revisions } : {}),
    },
  };
  try {
    return parseJobRequest(request, BUILT_IN_PIPELINES);
  } catch (err) {
    if (!(err instanceof InvalidJobRequestError)) throw err;
    // In a bare ticket file the ticket's fields are top-level (and the job id is the ticket's id).
    const inFile = (path: string) =>
      path === 'job_id' && flags.jobId === undefined ? 'id' : path.replace(/^entry(?:\.|$)/, '');
    const fields = err.issues.map((i) => ({ ...i, path: bareTicket ? inFile(i.path) : i.path }));
    const unique = fields.filter((f, n) => fields.findIndex((g) => g.path === f.path && g.message === f.message) === n);
    throw new InvalidTicketFileError(source, unique);
  }
}
