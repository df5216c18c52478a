/**
 * A handrail job as an A2A task: task id = context id = job id; the rail's status as the task's
 * state (an escalation waiting for a human is `input-required`, with the decisions it accepts);
 * the job's acks as the task's history, oldest first; the package's artifacts (and the write
 * receipt, once the job wrote) as the task's artifacts; what the job spent in `metadata.handrail`.
 */
import crypto from 'node:crypto';
import { Role, TaskState, type Artifact, type Message, type Part, type Task, type TaskStatus } from '@a2a-js/sdk';
import type { AckRecord } from '../../../contracts';
import type { JobStatusShown, JobView } from '../../operator/client';

const part = (content: Part['content']): Part => ({ content, metadata: undefined, filename: '', mediaType: '' });
export const textPart = (value: string): Part => part({ $case: 'text', value });
export const dataPart = (value: unknown): Part => ({
  ...part({ $case: 'data', value }),
  mediaType: 'application/json',
});

const stableId = (...parts: string[]) =>
  crypto.createHash('sha256').update(parts.join('\u0000'), 'utf8').digest('hex').slice(0, 32);

export function agentMessage(taskId: string, messageId: string, parts: Part[]): Message {
  return {
    messageId,
    contextId: taskId,
    taskId,
    role: Role.ROLE_AGENT,
    parts,
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

/** The task state of a job: the rail's status, or how Temporal ended a run the rail did not end.
 * A job that ended still escalated (no decision came in time) takes no more input: it failed. */
export function taskStateOf(status: JobStatusShown['status'], runStatus: string): TaskState {
  switch (status) {
    case 'running':
      return TaskState.TASK_STATE_WORKING;
    case 'escalated':
      return runStatus === 'RUNNING' ? TaskState.TASK_STATE_INPUT_REQUIRED : TaskState.TASK_STATE_FAILED;
    case 'completed':
      return TaskState.TASK_STATE_COMPLETED;
    case 'rejected':
      return TaskState.TASK_STATE_REJECTED;
    case 'cancelled':
    case 'canceled':
      return TaskState.TASK_STATE_CANCELED;
    default:
      return TaskState.TASK_STATE_FAILED;
  }
}

/** States after which a task changes no more. */
export const FINAL_STATES: ReadonlySet<TaskState> = new Set([
  TaskState.TASK_STATE_COMPLETED,
  TaskState.TASK_STATE_FAILED,
  TaskState.TASK_STATE_CANCELED,
  TaskState.TASK_STATE_REJECTED,
]);

/** What the status message says: the escalation and the decisions it takes, or why the job ended,
 * or where it is. */
function statusParts(status: JobStatusShown): Part[] {
  const escalation = status.escalation;
  const call = escalation?.tool_call;
  if (status.status === 'escalated' && call) {
    // A tool call waiting for a word: the call in the data part, and the reply that decides it.
    const tool_call = { digest: call.digest, verdict: 'approve | deny' };
    return [
      textPart(
        `waiting for a word on the tool call ${call.name} before ${escalation.blocked}. ` +
          `Reply to this task with a data part {"action": "approve", "tool_call": {"digest": "${call.digest}", "verdict": "approve" or "deny"}} (a "note" tells the model why), or {"action": "reject"}.`,
      ),
      dataPart({ escalation, decide: { actions: escalation.options, tool_call } }),
    ];
  }
  if (status.status === 'escalated' && escalation) {
    return [
      textPart(
        `waiting for a decision before ${escalation.blocked}: ${escalation.reasons.join('; ')}. ` +
          `Reply to this task with a data part {"action": one of ${escalation.options.join(', ')}}.`,
      ),
      dataPart({ escalation, decide: { actions: escalation.options } }),
    ];
  }
  const where = status.reason ?? `at ${status.stage} after ${status.hops} hop${status.hops === 1 ? '' : 's'}`;
  return [textPart(`${status.status}: ${where}`)];
}

export function taskStatusOf(taskId: string, status: JobStatusShown, runStatus: string, at?: string): TaskStatus {
  const state = taskStateOf(status.status, runStatus);
  return {
    state,
    message: agentMessage(
      taskId,
      `status-${stableId(taskId, String(state), String(status.hops), status.last_ack?.at ?? '', status.escalation?.since ?? '')}`,
      statusParts(status),
    ),
    timestamp: at ?? status.escalation?.since ?? status.last_ack?.at ?? undefined,
  };
}

/** One ack as a history message: the rail speaks for the job. */
export function ackMessage(taskId: string, ack: AckRecord): Message {
  const by = ack.actor ? ` by ${ack.actor}` : '';
  return agentMessage(taskId, `ack-${stableId(taskId, ack.delivery_key, ack.ack, ack.at)}`, [
    textPart(`${ack.stage} (hop ${ack.hop}): ${ack.ack}${by} — ${ack.reason}`),
    dataPart(ack),
  ]);
}

export function artifactsOf(view: JobView): Artifact[] {
  const artifacts: Artifact[] = view.package.artifacts.map((a, i) => ({
    artifactId: `${a.type}-${a.hash ?? i}`,
    name: a.type,
    description: a.schema ? `schema ${a.schema}` : '',
    parts: [part({ $case: 'url', value: a.uri })],
    metadata: { ...(a.hash ? { hash: a.hash } : {}), ...(a.schema ? { schema: a.schema } : {}) },
    extensions: [],
  }));
  if (view.result?.receipt) {
    artifacts.push({
      artifactId: 'receipt',
      name: 'receipt',
      description: "the write-once receipt of the job's write",
      parts: [dataPart(view.result.receipt)],
      metadata: undefined,
      extensions: [],
    });
  }
  return artifacts;
}

/** What the job spent and where it is, for callers that settle costs. */
export function handrailMetadata(view: {
  status: Pick<JobStatusShown, 'stage' | 'hops' | 'spent_usd' | 'usd_remaining' | 'revisions_remaining' | 'reason'> & {
    status: string;
  };
  run_status: string;
}): Record<string, unknown> {
  const { status } = view;
  return {
    handrail: {
      status: status.status,
      stage: status.stage,
      hops: status.hops,
      spent_usd: status.spent_usd,
      usd_remaining: status.usd_remaining,
      revisions_remaining: status.revisions_remaining,
      run_status: view.run_status,
      ...(status.reason ? { reason: status.reason } : {}),
    },
  };
}

/** `historyLength` as A2A defines it: the newest n messages; absent, all of them. */
function newest<T>(items: T[], historyLength: number | undefined): T[] {
  if (historyLength === undefined) return items;
  return historyLength <= 0 ? [] : items.slice(-historyLength);
}

export function taskOf(view: JobView, historyLength?: number): Task {
  const taskId = view.status.job_id;
  return {
    id: taskId,
    contextId: taskId,
    status: taskStatusOf(taskId, view.status, view.run_status, view.closed_at),
    artifacts: artifactsOf(view),
    history: newest(
      view.acks.map((a) => ackMessage(taskId, a)),
      historyLength,
    ),
    metadata: handrailMetadata(view),
  };
}

/** A job just started that no worker has answered for yet: accepted, not yet working. */
export function submittedTask(taskId: string): Task {
  return {
    id: taskId,
    contextId: taskId,
    status: {
      state: TaskState.TASK_STATE_SUBMITTED,
      message: agentMessage(taskId, `status-${stableId(taskId, 'submitted')}`, [
        textPart('submitted: waiting for a worker to take the job up'),
      ]),
      timestamp: undefined,
    },
    artifacts: [],
    history: [],
    metadata: undefined,
  };
}

/** One ack as a status update's status: the job working, the ack its message. */
export function ackStatus(taskId: string, ack: AckRecord): TaskStatus {
  return { state: TaskState.TASK_STATE_WORKING, message: ackMessage(taskId, ack), timestamp: ack.at };
}
