/**
 * The result of an earlier run of a job id: a job started again after it completed (the reuse
 * policy of `temporal workflow start` and the SDKs allows it) answers with the first run's result
 * instead of running again. Read through the worker's own Temporal client.
 */
import { Context } from '@temporalio/activity';
import type { JobResult } from '../contracts';

/** Visibility lists a closed run a moment after it closes: a run that closed just before the new
 * one started is looked for this long. */
const LISTING_LAG_MS = 3_000;

export function earlierRunActivities() {
  return {
    /** The result of the newest completed run of `job_id` other than `run_id`, or null if none. */
    async earlierJobResult({ job_id, run_id }: { job_id: string; run_id: string }): Promise<JobResult | null> {
      const client = Context.current().client;
      const deadline = Date.now() + LISTING_LAG_MS;
      for (;;) {
        const query = `WorkflowId = ${JSON.stringify(job_id)} AND ExecutionStatus = "Completed"`;
        for await (const run of client.workflow.list({ query, pageSize: 10 })) {
          if (run.runId !== run_id)
            return (await client.workflow.getHandle(job_id, run.runId, { followRuns: false }).result()) as JobResult;
        }
        if (Date.now() > deadline) return null;
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    },
  };
}
