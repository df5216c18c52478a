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
  type JobView,
} from '../../operator/client';
import { loadConfig } from '../../config';
import { JobFeeds, type FeedItem } from '../../stream/feeds';
import { openStore } from '../../worker/store';
import type { Store, StreamStore } from '../../worker/store/types';
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
  textPart,
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
  /** Where the jobs' streams are kept (the workers' store); default: the configured one, opened
   * on the first follow and closed by `close()`. */
  store?: StreamStore;
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
  private feeds: Promise<JobFeeds> | undefined;
  private opened: Store | undefined;

  constructor(private readonly options: A2aHandlerOptions) {}

  /** Closes the store this handler opened itself, if it did. */
  async close(): Promise<void> {
    await this.opened?.close();
  }

  /** The jobs' feeds: one reader per followed job, shared by every stream this server serves. */
  private jobFeeds(): Promise<JobFeeds> {
    this.feeds ??= (async () => {
      const store = this.options.store ?? (this.opened = await openStore(loadConfig()));
      return new JobFeeds(this.options.temporal, store);
    })();
    return this.feeds;
  }

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

  /** Waits for the job to end or wait for input (with `toEnd`, to end), following its stream, or
   * for the blocking wait to pass: the view then. */
  private async untilStopped(taskId: string, view: JobView | null, toEnd = false): Promise<JobView | null> {
    if (view && (toEnd ? FINAL_STATES.has(taskStateOf(view.status.status, view.run_status)) : !stillWorking(view)))
      return view;
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), this.options.blockingWaitMs ?? DEFAULT_BLOCKING_WAIT_MS);
    try {
      const feeds = await this.jobFeeds();
      for await (const item of newerThan(view, feeds.follow(taskId, 0, abort.signal))) {
        if (item.kind === 'lagged') break;
        if (item.kind === 'event' && item.event.type === 'job_finished') break;
        if (!toEnd && item.kind === 'state' && item.state.status !== 'running') break;
      }
    } finally {
      clearTimeout(timer);
      abort.abort();
    }
    return (await this.read(taskId)) ?? view;
  }

  /** The job's progress after `after`, from its stream: a status update per ack the rail records,
   * in order (the ack its message), the model's text as artifact chunks while a stage works (one
   * artifact per hop), then its new artifacts, then how it ended or that it waits for input. */
  private async *follow(taskId: string, after: JobView | null): AsyncGenerator<StreamResponse, void, undefined> {
    const runStatus = after?.run_status ?? 'RUNNING';
    const update = (status: TaskStatus, facts: StatusFacts): StreamResponse => ({
      payload: {
        $case: 'statusUpdate',
        value: {
          taskId,
          contextId: taskId,
          status,
          metadata: handrailMetadata({ status: facts, run_status: runStatus }),
        },
      },
    });
    let told = (after ? taskOf(after) : submittedTask(taskId)).status?.message?.messageId;
    // The acks the task already holds are not told again.
    let known = after?.acks.length ?? 0;
    let facts: StatusFacts | undefined = after?.status;
    let waitingSince: string | undefined = after?.status.escalation?.since;
    // An escalation opened at or after the newest ack the caller has read is one it has not seen:
    // the feed's first state (passed over: it may be older than `after`) cannot be the only word on it.
    const seenUntil = after?.acks.at(-1)?.at ?? '';
    const text = new Set<number>();
    const abort = new AbortController();
    try {
      const feeds = await this.jobFeeds();
      for await (const item of newerThan(after, feeds.follow(taskId, 0, abort.signal))) {
        if (item.kind === 'lagged') break;
        if (item.kind === 'state') {
          facts = item.state;
          waitingSince = item.state.status === 'escalated' ? item.state.escalated_since : undefined;
          continue;
        }
        const e = item.event;
        if (e.type === 'ack' || e.type === 'decision') {
          if (known > 0) known--;
          else if (facts) yield update(ackStatus(taskId, e.ack), facts);
        } else if (e.type === 'text_delta') {
          yield textChunk(taskId, e.hop, e.stage, e.delta, text.has(e.hop));
          text.add(e.hop);
        } else if (e.type === 'hop_finished' && text.has(e.hop)) {
          yield textChunk(taskId, e.hop, e.stage, '', true, true);
        } else if (e.type === 'job_finished') break;
        // The escalation the job waits on now (an earlier one was decided): the stream stops there.
        else if (e.type === 'escalated' && (e.escalation.since === waitingSince || e.escalation.since >= seenUntil))
          break;
      }
    } finally {
      abort.abort();
    }
    const stopped = await this.read(taskId);
    if (!stopped) return;
    const had = new Set((after ? artifactsOf(after) : []).map((a) => a.artifactId));
    for (const artifact of artifactsOf(stopped)) {
      if (had.has(artifact.artifactId)) continue;
      yield {
        payload: {
          $case: 'artifactUpdate',
          value: { taskId, contextId: taskId, artifact, append: false, lastChunk: true, metadata: undefined },
        },
      };
    }
    const last = taskOf(stopped).status!;
    if (FINAL_STATES.has(last.state) || last.message?.messageId !== told) yield update(last, stopped.status);
    told = last.message?.messageId;
  }
}

/** A feed's items for a caller that read the job already (`view`): the feed's first state, kept
 * from before, may be older than that view (read after a decision), so it is passed over. */
async function* newerThan(view: JobView | null, items: AsyncGenerator<FeedItem>): AsyncGenerator<FeedItem> {
  let first = view !== null;
  for await (const item of items) {
    if (!(first && item.kind === 'state')) yield item;
    first = false;
  }
}

/** What a status update's metadata says of the job. */
type StatusFacts = Parameters<typeof handrailMetadata>[0]['status'];

/** A piece of a hop's model text as an artifact chunk: one artifact per hop, appended to as the
 * model writes; `last` closes it when the hop finished. */
function textChunk(
  taskId: string,
  hop: number,
  stage: string,
  delta: string,
  append: boolean,
  last = false,
): StreamResponse {
  return {
    payload: {
      $case: 'artifactUpdate',
      value: {
        taskId,
        contextId: taskId,
        artifact: {
          artifactId: `text-hop-${hop}`,
          name: `${stage} text`,
          description: `what the model wrote at hop ${hop} (${stage}), as it wrote it`,
          parts: [textPart(delta)],
          metadata: undefined,
          extensions: [],
        },
        append,
        lastChunk: last,
        metadata: undefined,
      },
    },
  };
}
