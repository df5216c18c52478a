import {
  HUMAN,
  entryMemoryRefs,
  requestEntry,
  type HandoffV1,
  type JobRequest,
  type Pipeline,
} from '../../contracts/rail';
import type { JobAttributes } from '../search-attributes';
import { fanOutStage, route } from './routing';

/** The package a job starts with, its one artifact of the pipeline's entry type; the entry rides
 * as a data: URI so the first stage reads it without the workflow doing I/O. Nothing here is
 * trusted: the first hop validates it like any other. */
export function firstPackage(
  request: JobRequest,
  traceparent: string,
  entry: Pick<Pipeline, 'entry' | 'entrySpec'>,
): HandoffV1 {
  const body = requestEntry(request, entry.entrySpec);
  return {
    schema: 'handoff.v1',
    job_id: request.job_id,
    goal: request.goal,
    constraints: request.constraints,
    artifacts: [
      {
        type: entry.entry,
        uri: `data:application/json,${encodeURIComponent(JSON.stringify(body))}`,
        schema: entry.entry,
      },
    ],
    open_questions: [],
    tools_tried: [],
    evaluator: { last_verdict: 'none', failures: [] },
    budget: { usd_remaining: request.budget?.usd, revisions_remaining: request.budget?.revisions },
    memory_refs: entryMemoryRefs(entry.entrySpec, body),
    trace: { traceparent },
  } as HandoffV1;
}

/** Where a job starts: its first package, and the stage the pipeline's first route sends it to —
 * a fan-out's as the rail shows it (`fanOutStage`), or the human hop when that route ends or
 * escalates the job. */
export function jobStart(
  request: JobRequest,
  pipeline: Pick<Pipeline, 'routes' | 'entry' | 'entrySpec'>,
  traceparent: string,
): { package: HandoffV1; stage: string } {
  const pkg = firstPackage(request, traceparent, pipeline);
  const first = route(pipeline, pkg);
  return {
    package: pkg,
    stage: first.kind === 'hop' ? first.to : first.kind === 'fanout' ? fanOutStage(first.rule.fanOut) : HUMAN,
  };
}

/** What a job shows before its first hop: the rail's first publish when the pipeline starts with a
 * hop. `startJob` sets them when it starts the job, so the job shows them before a worker picks it
 * up, and the rail, finding them there, has nothing to upsert until the hop moves something. */
export function startingAttributes(
  request: JobRequest,
  pipeline: Pick<Pipeline, 'name' | 'routes' | 'entry' | 'entrySpec'>,
): JobAttributes {
  // Routing reads the artifacts, not the trace.
  const start = jobStart(request, pipeline, request.traceparent ?? '');
  return {
    status: 'running',
    stage: start.stage,
    ack: 'none',
    verdict: start.package.evaluator.last_verdict,
    hops: start.package.hop?.count ?? 0,
    usdRemaining: start.package.budget.usd_remaining,
    pipeline: pipeline.name,
    acks: [],
  };
}
