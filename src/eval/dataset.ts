/**
 * A JSONL dataset of fresh runs, one entry a line, pure:
 *
 *   {"case": "refund-1", "pipeline": "support-routing", "ticket": {...}, "repeat": 5,
 *    "expect": {"status": "completed", "visits": ["billing"], "write": {"contains": ["refund"]}}}
 *
 * `ticket` (or `entry`) is the job's entry; `goal`, `constraints`, `budget`, `max_hops` and
 * `decision_timeout` default to the reference triage job's, with a 1s decision timeout so an
 * escalation ends the job instead of waiting days for a human. Blank lines and `#` lines are skipped.
 */
import type { JobRequest, Pipeline } from '../../contracts';
import { ID_PATTERN } from '../../contracts/names';
import { InvalidJobRequestError, parseJobRequest } from '../operator/client';
import { DEFAULT_JOB } from '../operator/cli/ticket';
import type { Expectation } from './types';

/** How long a fresh job's escalation waits for a human by default: nobody decides during an eval. */
export const EVAL_DECISION_TIMEOUT = '1s';
/** A dataset's cap on one entry's repeats: a typo must not start a million jobs. */
export const MAX_REPEAT = 1000;

export interface FreshCase {
  case: string;
  /** The request without its job id: every run gets one of its own. */
  request: Omit<JobRequest, 'job_id'>;
  expect?: Expectation;
}

export class DatasetError extends Error {
  override readonly name = 'DatasetError';
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function expectation(raw: unknown, where: string): Expectation | undefined {
  if (raw === undefined) return undefined;
  if (!isObject(raw)) throw new DatasetError(`${where}: "expect" must be an object`);
  const strings = (v: unknown, name: string) => {
    if (v !== undefined && !(Array.isArray(v) && v.every((s) => typeof s === 'string')))
      throw new DatasetError(`${where}: "${name}" must be a list of strings`);
    return v as string[] | undefined;
  };
  const write = raw.write;
  if (write !== undefined && !isObject(write)) throw new DatasetError(`${where}: "expect.write" must be an object`);
  if (write?.matches !== undefined) {
    try {
      new RegExp(String(write.matches));
    } catch (err) {
      throw new DatasetError(`${where}: "expect.write.matches" is not a regular expression: ${(err as Error).message}`);
    }
  }
  const out: Expectation = {};
  if (raw.status !== undefined) out.status = String(raw.status) as Expectation['status'];
  const visits = strings(raw.visits, 'expect.visits');
  if (visits) out.visits = visits;
  if (write) {
    const contains = strings(write.contains, 'expect.write.contains');
    const absent = strings(write.absent, 'expect.write.absent');
    out.write = {
      ...(contains ? { contains } : {}),
      ...(absent ? { absent } : {}),
      ...(write.matches !== undefined ? { matches: String(write.matches) } : {}),
    };
  }
  return out;
}

function entryCases(raw: Record<string, unknown>, where: string, pipelines: readonly Pipeline[]): FreshCase[] {
  const name = raw.case === undefined ? where.replace(/^.*:/, 'line-') : String(raw.case);
  if (!ID_PATTERN.test(name)) throw new DatasetError(`${where}: "case" must be an id (letters, digits, _ . -)`);
  const repeat = raw.repeat === undefined ? 1 : Number(raw.repeat);
  if (!Number.isInteger(repeat) || repeat < 1 || repeat > MAX_REPEAT)
    throw new DatasetError(`${where}: "repeat" must be a whole number from 1 to ${MAX_REPEAT}`);
  if (raw.pipeline !== undefined && !pipelines.some((p) => p.name === raw.pipeline))
    throw new DatasetError(
      `${where}: pipeline ${JSON.stringify(raw.pipeline)} is not among ${pipelines.map((p) => p.name).join(', ')}`,
    );
  const entry = raw.entry ?? raw.ticket;
  if (entry === undefined) throw new DatasetError(`${where}: an entry needs "ticket" (or "entry"): the job's input`);
  let request: JobRequest;
  try {
    request = parseJobRequest(
      {
        job_id: 'eval-entry',
        ...(raw.pipeline === undefined ? {} : { pipeline: raw.pipeline }),
        entry,
        goal: raw.goal ?? DEFAULT_JOB.goal,
        constraints: raw.constraints ?? [...DEFAULT_JOB.constraints],
        budget: raw.budget ?? { ...DEFAULT_JOB.budget },
        decision_timeout: raw.decision_timeout ?? EVAL_DECISION_TIMEOUT,
        ...(raw.max_hops === undefined ? {} : { max_hops: raw.max_hops }),
      },
      pipelines,
    );
  } catch (err) {
    if (err instanceof InvalidJobRequestError) throw new DatasetError(`${where}: ${err.message}`);
    throw err;
  }
  const { job_id: _placeholder, ...rest } = request;
  const expect = expectation(raw.expect, where);
  return Array.from({ length: repeat }, (_, n) => ({
    case: repeat === 1 ? name : `${name}.${n + 1}`,
    request: rest,
    ...(expect ? { expect } : {}),
  }));
}

/** Every case of a JSONL dataset; `source` names it in errors (`file.jsonl:3: …`). */
export function parseDataset(text: string, source: string, pipelines: readonly Pipeline[]): FreshCase[] {
  const cases: FreshCase[] = [];
  text.split(/\r?\n/).forEach((line, n) => {
    const where = `${source}:${n + 1}`;
    if (!line.trim() || line.trimStart().startsWith('#')) return;
    let raw: unknown;
    try {
      raw = JSON.parse(line);
    } catch (err) {
      throw new DatasetError(`${where}: not JSON (${(err as Error).message})`);
    }
    if (!isObject(raw)) throw new DatasetError(`${where}: an entry is a JSON object`);
    cases.push(...entryCases(raw, where, pipelines));
  });
  const seen = new Set<string>();
  for (const c of cases) {
    if (seen.has(c.case))
      throw new DatasetError(`${source}: case "${c.case}" appears twice (cases are compared by name)`);
    seen.add(c.case);
  }
  return cases;
}
