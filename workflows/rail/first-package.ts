import { DEFAULT_ENTRY, type HandoffV1, type JobRequest } from '../../contracts/rail';

/** The package a job starts with, its one artifact of the pipeline's entry type; the raw ticket rides as a data: URI so intake reads it without
 * the workflow doing I/O. Nothing here is trusted: the first hop validates it like any other. */
export function firstPackage(request: JobRequest, traceparent: string, entry: string = DEFAULT_ENTRY): HandoffV1 {
  const ticket = request.ticket;
  return {
    schema: 'handoff.v1',
    job_id: request.job_id,
    goal: request.goal,
    constraints: request.constraints,
    artifacts: [{ type: entry, uri: `data:application/json,${encodeURIComponent(JSON.stringify(ticket))}`, schema: entry }],
    open_questions: [],
    tools_tried: [],
    evaluator: { last_verdict: 'none', failures: [] },
    budget: { usd_remaining: request.budget?.usd, revisions_remaining: request.budget?.revisions },
    memory_refs: ticket?.customer_id ? [`customer_id:${ticket.customer_id}`] : [],
    trace: { traceparent },
  } as HandoffV1;
}

