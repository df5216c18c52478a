/**
 * handrail's A2A request handler: the protocol's methods over Temporal, with no task store of its
 * own (the job is the task). The SDK's JSON-RPC transport parses requests and maps the errors
 * thrown here to the protocol's error codes.
 *
 *   SendMessage (a first message)      → start the job the message names (idempotent on messageId)
 *   SendMessage (naming a task)        → the job's `decide` update, the caller as actor
 *   GetTask / CancelTask               → the job's view / cancel
 *   SendStreamingMessage, SubscribeToTask → the job's progress as status updates
 */
import { TaskState, type AgentCard, type Message, type StreamResponse, type Task, type TaskStatus } from '@a2a-js/sdk';
import {
  ExtendedAgentCardNotConfiguredError,
  PushNotificationNotSupportedError,
  RequestMalformedError,
  TaskNotCancelableError,
  TaskNotFoundError,
  UnsupportedOperationError,
} from '@a2a-js/sdk/errors';
import type { A2ARequestHandler, ServerCallContext, User } from '@a2a-js/sdk/server';
import type { Client } from '@temporalio/client';
import type { Pipeline } from '../../../contracts';
import {
  DecisionRefusedError,
  JobClosedError,
  JobEndedError,
  JobNotFoundError,
  NoWorkerAnsweredError,
  cancelJob,
  decide,
  getJob,
  startJob,
  watchJob,
  type JobView,
} from '../../operator/client';
import type { ApiUser } from '../api-users';
import { dataOf, decisionOf, decisionUpdateId, jobRequestOf, mayAccess } from './task-messages';
import {
  FINAL_STATES,
  artifactsOf,
  handrailMetadata,
  ackStatus,
  submittedTask,
  taskOf,
  taskStateOf,
  taskStatusOf,
} from './task-view';

/** The authenticated caller, as the SDK carries it in the call context. */
export class A2aCaller implements User {
  constructor(readonly api: ApiUser) {}
  get isAuthenticated() {
    return true;
  }
  get userName() {
    return this.api.name;
  }
}

export interface A2aHandlerOptions {
  temporal: Client;
  /** The pipelines served: the skills. */
  pipelines: readonly Pipeline[];
  /** Where jobs start (the workers' queue); default as `startJob`'s. */
  taskQueue?: string;
  card: () => AgentCard;
  /** How long a blocking SendMessage waits for the job to end or wait for input before it answers
   * with the task as it stands (still working). */
  blockingWaitMs?: number;
  pollMs?: number;
}

const DEFAULT_BLOCKING_WAIT_MS = 30_000;

function callerOf(context: ServerCallContext): ApiUser {
  const user = context.user;
  // The server authenticates every call before it reaches the handler; this is the type's check.
  if (!(user instanceof A2aCaller)) throw new UnsupportedOperationError('unauthenticated call');
  return user.api;
}

const stillWorking = (view: JobView) =>
  taskStateOf(view.status.status, view.run_status) === TaskState.TASK_STATE_WORKING;

export class HandrailA2aHandler implements A2ARequestHandler {
  constructor(private readonly options: A2aHandlerOptions) {}

  async getAgentCard(): Promise<AgentCard> {
    return this.options.card();
  }

  async getAuthenticatedExtendedAgentCard(): Promise<AgentCard> {
    throw new ExtendedAgentCardNotConfiguredError();
  }

  async sendMessage(params: Parameters<A2ARequestHandler['sendMessage']>[0], context: ServerCallContext) {
    const { taskId, view } = await this.accept(params.message, context);
    const answer = params.configuration?.returnImmediately ? view : await this.untilStopped(taskId, view);
    return answer ? taskOf(answer, params.configuration?.historyLength) : submittedTask(taskId);
  }

  async *sendMessageStream(
    params: Parameters<A2ARequestHandler['sendMessageStream']>[0],
    context: ServerCallContext,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    const { taskId, view } = await this.accept(params.message, context);
    yield { payload: { $case: 'task', value: view ? taskOf(view) : submittedTask(taskId) } };
    yield* this.follow(taskId, view);
  }

  async getTask(params: Parameters<A2ARequestHandler['getTask']>[0], context: ServerCallContext): Promise<Task> {
    return taskOf(await this.visibleJob(params.id, callerOf(context)), params.historyLength);
  }

  async cancelTask(params: Parameters<A2ARequestHandler['cancelTask']>[0], context: ServerCallContext): Promise<Task> {
    const view = await this.visibleJob(params.id, callerOf(context));
    try {
      await cancelJob(this.options.temporal, view.status.job_id);
    } catch (error) {
      if (error instanceof JobClosedError) throw new TaskNotCancelableError(error.message);
      throw error;
    }
    return taskOf((await this.untilStopped(params.id, view, true)) ?? view);
  }

  async *resubscribe(
    params: Parameters<A2ARequestHandler['resubscribe']>[0],
    context: ServerCallContext,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    const view = await this.visibleJob(params.id, callerOf(context));
    const task = taskOf(view);
    if (FINAL_STATES.has(task.status!.state))
      throw new UnsupportedOperationError(`task ${params.id} has ended; get it instead`);
    yield { payload: { $case: 'task', value: task } };
    yield* this.follow(params.id, view);
  }

  async listTasks(): Promise<never> {
    throw new UnsupportedOperationError('listing tasks is not supported; get each task by its id');
  }

  async createTaskPushNotificationConfig(): Promise<never> {
    throw new PushNotificationNotSupportedError();
  }
  async getTaskPushNotificationConfig(): Promise<never> {
    throw new PushNotificationNotSupportedError();
  }
  async listTaskPushNotificationConfigs(): Promise<never> {
    throw new PushNotificationNotSupportedError();
  }
  async deleteTaskPushNotificationConfig(): Promise<never> {
    throw new PushNotificationNotSupportedError();
  }

  /** A first message starts its job (or finds the one it started); a message naming a task
   * decides its escalation. Either way, the job as it stands after: null while no worker has
   * answered for it yet (a job just started waits for its first workflow task). */
  private async accept(
    input: Message | undefined,
    context: ServerCallContext,
  ): Promise<{ taskId: string; view: JobView | null }> {
    const user = callerOf(context);
    const { message, data } = dataOf(input);
    if (message.taskId) return { taskId: message.taskId, view: await this.decideFor(user, message, data) };
    const request = jobRequestOf(user, message, data, this.options.pipelines);
    await startJob(this.options.temporal, request, {
      pipelines: this.options.pipelines,
      ...(this.options.taskQueue ? { taskQueue: this.options.taskQueue } : {}),
    });
    return { taskId: request.job_id, view: await this.read(request.job_id) };
  }

  /** The job, or null when no worker answered for it within the query deadline. */
  private async read(taskId: string): Promise<JobView | null> {
    try {
      return await getJob(this.options.temporal, taskId);
    } catch (error) {
      if (error instanceof NoWorkerAnsweredError) return null;
      throw error;
    }
  }

  private async decideFor(user: ApiUser, message: Message, data: Record<string, unknown>): Promise<JobView> {
    const taskId = message.taskId;
    if (!mayAccess(user, taskId)) throw new TaskNotFoundError(`no task ${taskId}`);
    const decision = decisionOf(user, data);
    try {
      await decide(this.options.temporal, taskId, decision, { updateId: decisionUpdateId(user, message.messageId) });
    } catch (error) {
      if (error instanceof JobNotFoundError) throw new TaskNotFoundError(`no task ${taskId}`);
      if (error instanceof JobEndedError) throw new UnsupportedOperationError(error.message);
      if (error instanceof DecisionRefusedError) throw new RequestMalformedError(error.message);
      throw error;
    }
    return getJob(this.options.temporal, taskId);
  }

  /** The job behind a task id, if the caller may see it; else TaskNotFound, as for a missing one. */
  private async visibleJob(taskId: string, user: ApiUser): Promise<JobView> {
    if (!mayAccess(user, taskId)) throw new TaskNotFoundError(`no task ${taskId}`);
    try {
      return await getJob(this.options.temporal, taskId);
    } catch (error) {
      if (error instanceof JobNotFoundError) throw new TaskNotFoundError(`no task ${taskId}`);
      throw error;
    }
  }

  /** Polls the job until it ends or waits for input (with `toEnd`, until it ends), or the blocking
   * wait passes: the view then. */
  private async untilStopped(taskId: string, view: JobView | null, toEnd = false): Promise<JobView | null> {
    const deadline = Date.now() + (this.options.blockingWaitMs ?? DEFAULT_BLOCKING_WAIT_MS);
    let now = view;
    while (Date.now() < deadline) {
      if (now && (toEnd ? FINAL_STATES.has(taskStateOf(now.status.status, now.run_status)) : !stillWorking(now)))
        return now;
      await new Promise((r) => setTimeout(r, this.options.pollMs ?? 250));
      now = (await this.read(taskId)) ?? now;
    }
    return now;
  }

  /** The job's progress after `after` as status updates: one per ack the rail records, in order
   * (the ack its message), and one for a status that is news without an ack of its own (waiting
   * for input); then its new artifacts, then how it ended or that it waits. */
  private async *follow(taskId: string, after: JobView | null): AsyncGenerator<StreamResponse, void, undefined> {
    const runStatus = after?.run_status ?? 'RUNNING';
    const update = (status: TaskStatus, view: Pick<JobView, 'status' | 'run_status'>): StreamResponse => ({
      payload: {
        $case: 'statusUpdate',
        value: { taskId, contextId: taskId, status, metadata: handrailMetadata(view) },
      },
    });
    let told = (after ? taskOf(after) : submittedTask(taskId)).status?.message?.messageId;
    const watch = watchJob(this.options.temporal, taskId, {
      ...(after ? { after } : {}),
      ...(this.options.pollMs ? { pollMs: this.options.pollMs } : {}),
    });
    let step = await watch.next();
    while (!step.done) {
      const view = { status: step.value.status, run_status: runStatus };
      for (const ack of step.value.acks) yield update(ackStatus(taskId, ack), view);
      const status = taskStatusOf(taskId, step.value.status, runStatus);
      // The ending is told last, after the artifacts it brought, as the job was read once it stopped;
      // a working job's acks told where it is.
      const working = status.state === TaskState.TASK_STATE_WORKING && step.value.acks.length > 0;
      if (!FINAL_STATES.has(status.state) && !working && status.message?.messageId !== told) yield update(status, view);
      told = status.message?.messageId;
      step = await watch.next();
    }
    const stopped = step.value;
    const known = new Set((after ? artifactsOf(after) : []).map((a) => a.artifactId));
    for (const artifact of artifactsOf(stopped)) {
      if (known.has(artifact.artifactId)) continue;
      yield {
        payload: {
          $case: 'artifactUpdate',
          value: { taskId, contextId: taskId, artifact, append: false, lastChunk: true, metadata: undefined },
        },
      };
    }
    const last = taskOf(stopped).status!;
    if (FINAL_STATES.has(last.state) || last.message?.messageId !== told) yield update(last, stopped);
  }
}
