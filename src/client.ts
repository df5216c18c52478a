/**
 * The client API operators and scripts use to start and steer jobs.
 * A job id is a business key: workflow id = job_id, and starting a job whose id already exists
 * (running or closed) never creates a second job — `startJob` attaches to the existing one.
 */
import { Client, WorkflowExecutionAlreadyStartedError, type WorkflowHandle } from '@temporalio/client';
import { WorkflowIdConflictPolicy, WorkflowIdReusePolicy } from '@temporalio/common';
import { JobRequest, type JobResult } from '../contracts';
import type { handoffJob } from '../workflows';
import { loadConfig, type HandrailConfig } from './config';
import { connectClient } from './connect';

export class InvalidJobRequestError extends Error {
  override readonly name = 'InvalidJobRequestError';
  constructor(readonly issues: { path: string; message: string }[]) {
    super(`invalid job request: ${issues.map((i) => `${i.path || 'request'}: ${i.message}`).join('; ')}`);
  }
}

export type JobHandle = WorkflowHandle<typeof handoffJob>;

export interface StartedJob {
  handle: JobHandle;
  /** False when a job with this id already existed and was returned instead. */
  created: boolean;
}

/** Connects a client to the configured server (clear error within seconds when it is down). */
export async function connectHandrail(config: HandrailConfig = loadConfig()): Promise<Client> {
  const connection = await connectClient(config);
  return new Client({ connection, namespace: config.namespace });
}

/** Checks a request against the contract before anything is started. */
export function parseJobRequest(input: unknown): JobRequest {
  const parsed = JobRequest.safeParse(input);
  if (!parsed.success) throw new InvalidJobRequestError(parsed.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message })));
  return parsed.data;
}

export async function startJob(client: Client, input: unknown, config: Pick<HandrailConfig, 'taskQueue'> = loadConfig()): Promise<StartedJob> {
  const request = parseJobRequest(input);
  try {
    const handle = await client.workflow.start<typeof handoffJob>('handoffJob', {
      taskQueue: config.taskQueue,
      workflowId: request.job_id,
      args: [request],
      // One job per business key, ever: a closed job is not re-run under the same id.
      workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
      workflowIdConflictPolicy: WorkflowIdConflictPolicy.FAIL,
      staticSummary: `${request.job_id}: ${request.goal}`.slice(0, 200),
      staticDetails: [
        `**Ticket** ${request.ticket.id} (customer ${request.ticket.customer_id}): ${request.ticket.subject}`,
        `**Constraints**: ${request.constraints.join('; ') || 'none'}`,
        `**Budget**: $${request.budget.usd}, ${request.budget.revisions} revisions, max ${request.max_hops ?? 8} hops`,
      ].join('\n\n'),
    });
    return { handle, created: true };
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) {
      return { handle: client.workflow.getHandle<typeof handoffJob>(request.job_id), created: false };
    }
    throw err;
  }
}

/** The result of a job, waiting for it to end. */
export function jobResult(client: Client, jobId: string): Promise<JobResult> {
  return client.workflow.getHandle<typeof handoffJob>(jobId).result();
}
