/**
 * A delegating stage: it sends its delivered package to a remote A2A agent (the official JS SDK's
 * client) and waits for the remote task's end, polling it while the stage activity heartbeats.
 * The message's id is the delivery key, and the remote task's id is recorded under that key as
 * soon as the agent answers, so a retried attempt (a worker killed mid-wait) resumes polling the
 * same remote task instead of sending another. A send whose outcome no one can know (sent, no
 * task recorded, an agent that neither lists tasks nor dedupes message ids) is not repeated: the
 * stage fails `RemoteTaskInDoubt` and a human reconciles. The remote artifact must be a valid body
 * of the artifact type the stage emits; a remote agent asking for input is the job's escalation.
 */
import { Role, TaskState, type Artifact as A2aArtifact, type Message, type Part, type Task } from '@a2a-js/sdk';
import { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory, type Client } from '@a2a-js/sdk/client';
import { A2AError } from '@a2a-js/sdk/errors';
import { log } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { z } from 'zod';
import {
  assistantMessage,
  canonicalJson,
  issueLines,
  newestArtifact,
  type HandoffV1,
  type StageCard,
  type StageFailureType,
} from '../contracts';
import { attemptSteps, storedSteps, type StepJournal } from '../src/agents';
import type { Store } from '../src/worker/store';
import { readArtifactText, writeArtifact } from './artifacts';
import { stageFailure } from './failures';
import { noteAnswered, noteWaiting, waitingTaskToAnswer, type WaitingTask } from './a2a-waiting';
import { abandonedSignal } from './model-call';
import type { StageOutput } from './stage';
import type { StageTurn } from './turn';

/** The remote agent a stage delegates to. */
export interface A2aAgent {
  /** Where its agent card is served (`<url>/.well-known/agent-card.json`). */
  url: string;
  /** The card's tool grant naming the agent: its `usdPerCall` is the declared price of one task. */
  grant: string;
  /** A bearer token for the agent, when it asks for one. */
  token?: string;
  /**
   * The agent answers a repeated `messageId` with the task the first one started (handrail's own
   * A2A server does). Only then may a send whose outcome is unknown be repeated when the agent
   * cannot list its tasks; otherwise the stage fails `RemoteTaskInDoubt` rather than risk paying
   * for a second task. The agent's documentation vouches for it, not the protocol.
   */
  dedupesMessageIds?: boolean;
}

export interface A2aStageSpec<S extends z.ZodType> {
  card: Pick<StageCard, 'name' | 'tools' | 'outputs' | 'nominalCostUsd' | 'worstCaseCostUsd'>;
  agent: A2aAgent;
  /** What the remote agent is asked (the message's text part; its data part is the package). */
  question: string;
  /** The artifact the stage emits: the remote artifact's body must be valid under its schema. */
  output: { type: string; schema: S };
  /** How often the remote task is read while it works (default 1 s). */
  pollMs?: number;
  /** The stage's summary segment, from the remote answer. */
  summary?: (body: z.infer<S>) => string;
}

/** The step under the delivery key that holds the remote task this delivery started. */
export const REMOTE_TASK_STEP = 'a2a:task';
const SENDING_STEP = 'a2a:sending';

interface RemoteTask {
  agent: string;
  task_id: string;
  context_id: string;
  /** An agent that answered with a message, no task: that answer, as a finished task. */
  answer?: Task;
}

/** States in which the remote task waits for what only a human can give. */
const ASKING = new Set([TaskState.TASK_STATE_INPUT_REQUIRED, TaskState.TASK_STATE_AUTH_REQUIRED]);

/** States in which the remote task will not change without someone acting. */
const STOPPED = new Set([
  TaskState.TASK_STATE_COMPLETED,
  TaskState.TASK_STATE_FAILED,
  TaskState.TASK_STATE_REJECTED,
  TaskState.TASK_STATE_CANCELED,
  ...ASKING,
]);

/** A typed stage failure whose message fits an ack's reason. */
const remoteFailure = (type: StageFailureType, message: string, details: Record<string, unknown>) =>
  stageFailure(type, message.slice(0, 1_000), details);

/**
 * The failure type of a send that may have started a remote task no one can find: non-retryable
 * (a retry could only send again, and pay twice), so the rail escalates and a human reconciles
 * with the agent.
 */
export const REMOTE_TASK_IN_DOUBT = 'RemoteTaskInDoubt' satisfies StageFailureType;

export async function runA2aStage<S extends z.ZodType>(
  store: Store,
  pkg: HandoffV1,
  turn: StageTurn,
  spec: A2aStageSpec<S>,
): Promise<StageOutput> {
  const grant = spec.card.tools.find((t) => t.name === spec.agent.grant);
  if (!grant)
    throw new Error(
      `${spec.card.name} delegates to ${spec.agent.url} under grant "${spec.agent.grant}", which its card does not grant`,
    );
  const prompt = await turn.prompt({ question: spec.question });
  const journal = turn.deliveryKey === undefined ? attemptSteps() : await storedSteps(store, turn.deliveryKey);
  const messageId = turn.deliveryKey ?? `${pkg.job_id}:${spec.card.name}:${pkg.hop?.count ?? 0}`;
  const client = await connect(spec.agent);
  const signal = abandonedSignal();
  const remote =
    recordedTask(journal) ??
    (await answerWaiting(store, client, journal, turn)) ??
    (await startRemoteTask(client, journal, spec.agent, messageId, {
      question: prompt.questionText,
      data: { handoff: pkg, input: await inputOf(store, pkg) },
    }));
  const task = await untilStopped(client, remote, spec.pollMs ?? 1_000, signal);
  if (
    ASKING.has(task.status?.state ?? TaskState.TASK_STATE_UNSPECIFIED) &&
    turn.deliveryKey !== undefined &&
    remote.task_id
  )
    await noteWaiting(store, turn.deliveryKey, remote);
  const body = answerOf(spec, task);
  turn.reply(assistantMessage(canonicalJson(body)));
  const reported = reportedCostUsd(task);
  return {
    artifact: await writeArtifact(store, spec.output.type, spec.output.schema, body as z.input<S>),
    body,
    // A declared price is what one task costs; otherwise what the agent says it cost. The rail
    // settles at most the hop's reservation and flags an overspend.
    cost_usd: grant.usdPerCall ?? reported ?? 0,
    tools_tried: [{ name: grant.name, ok: true }],
    summary: spec.summary?.(body) ?? `${spec.output.type} from A2A agent ${spec.agent.url} (task ${remote.task_id})`,
  };
}

async function connect(agent: A2aAgent): Promise<Client> {
  const fetchImpl: typeof fetch = (input, init) => {
    if (!agent.token) return fetch(input, init);
    const headers = new Headers(init?.headers);
    headers.set('authorization', `Bearer ${agent.token}`);
    return fetch(input, { ...init, headers });
  };
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl })],
    }),
  );
  return factory.createFromUrl(agent.url);
}

function recordedTask(journal: StepJournal): RemoteTask | undefined {
  const recorded = journal.find(REMOTE_TASK_STEP);
  return recorded === undefined ? undefined : (JSON.parse(recorded) as RemoteTask);
}

/**
 * Sends the message once per delivery, unless an earlier attempt may have sent it (it noted that
 * it was sending, and died before the task id was recorded): then what became of that send is
 * settled first (`earlierSend`), and the message is sent again only where that cannot start a
 * second task. The agent answers at once (`returnImmediately`), so the task id is recorded before
 * the remote work is waited for.
 */
async function startRemoteTask(
  client: Client,
  journal: StepJournal,
  { url: agent, dedupesMessageIds }: A2aAgent,
  messageId: string,
  content: { question: string; data: unknown },
): Promise<RemoteTask> {
  const contextId = `ctx-${messageId}`;
  if (journal.find(SENDING_STEP) !== undefined) {
    const found = await earlierSend(client, { agent, messageId, contextId }, dedupesMessageIds === true);
    if (found) return record(journal, { agent, task_id: found.id, context_id: found.contextId });
  } else await journal.record(SENDING_STEP, messageId);
  const answer = await refusedAsFailure(agent, () =>
    client.sendMessage({
      tenant: '',
      message: requestMessage(messageId, contextId, content),
      configuration: { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately: true },
      metadata: undefined,
    }),
  );
  if (!('status' in answer))
    // An agent that answers with a message and no task did the work at once: a task of its own.
    return record(journal, { agent, task_id: '', context_id: answer.contextId, answer: messageTask(answer) });
  return record(journal, { agent, task_id: answer.id, context_id: answer.contextId });
}

/**
 * A delivery that brings a human's decision after the remote task asked for input: the decision
 * (the decided record's text) goes to that task as its next message, and this delivery follows it.
 */
async function answerWaiting(
  store: Store,
  client: Client,
  journal: StepJournal,
  turn: StageTurn,
): Promise<RemoteTask | undefined> {
  if (turn.deliveryKey === undefined) return undefined;
  const found = await waitingTaskToAnswer(store, turn.deliveryKey, turn.hooks ?? []);
  if (!found) return undefined;
  const { task } = found;
  // Noted only once sent, and a retry of this delivery that finds its own note follows the task
  // without sending: a worker that dies before the task is journalled below leaves a note that
  // keeps the retry on this task (without it, the retry found nothing waiting and started,
  // and paid for, a second one).
  if (!found.sent) {
    await sendAnswer(client, turn.deliveryKey, task, found.answer);
    await noteAnswered(store, turn.deliveryKey, found.round);
  }
  return record(journal, { agent: task.agent, task_id: task.task_id, context_id: task.context_id });
}

/** The human's answer, as the waiting task's next message (under this delivery's key). */
async function sendAnswer(client: Client, deliveryKey: string, task: WaitingTask, answer: string): Promise<void> {
  const message = { ...requestMessage(deliveryKey, task.context_id, { question: answer }), taskId: task.task_id };
  await refusedAsFailure(task.agent, () =>
    client.sendMessage({
      tenant: '',
      message,
      configuration: { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately: true },
      metadata: undefined,
    }),
  );
}

async function record(journal: StepJournal, task: RemoteTask): Promise<RemoteTask> {
  return JSON.parse(await journal.record(REMOTE_TASK_STEP, JSON.stringify(task))) as RemoteTask;
}

/** A direct message answer, kept as a finished task (its parts as the one artifact). */
function messageTask(message: Message): Task {
  const artifact = {
    artifactId: message.messageId,
    name: '',
    description: '',
    parts: message.parts,
    metadata: undefined,
    extensions: [],
  };
  return {
    id: '',
    contextId: message.contextId,
    status: { state: TaskState.TASK_STATE_COMPLETED, message, timestamp: undefined },
    artifacts: [artifact],
    history: [],
    metadata: message.metadata,
  };
}

interface EarlierSend {
  agent: string;
  messageId: string;
  contextId: string;
}

/**
 * What an earlier attempt's send started, when it died before recording the answer: the task in
 * this delivery's context, as the agent lists it; undefined when the message may be sent again —
 * the agent lists no task there, or it cannot list but dedupes message ids (the same task comes
 * back). An agent that can do neither leaves the send in doubt: sending again could start, and
 * pay for, a second task, so the stage fails `RemoteTaskInDoubt` for a human to reconcile.
 */
async function earlierSend(client: Client, send: EarlierSend, dedupes: boolean): Promise<Task | undefined> {
  let listed: Task[];
  try {
    listed = await tasksInContext(client, send.contextId);
  } catch (error) {
    // Only the agent's own refusal says it cannot list; a network error is retried as it is.
    if (!(error instanceof A2AError && REFUSALS.has(error.reason))) throw error;
    if (!dedupes) throw remoteTaskInDoubt(send, error);
    log.warn('the A2A agent cannot list tasks; it dedupes message ids, so the message is sent again', {
      context_id: send.contextId,
      error: String(error),
    });
    return undefined;
  }
  return listed[0];
}

async function tasksInContext(client: Client, contextId: string): Promise<Task[]> {
  const listed = await client.listTasks({
    tenant: '',
    contextId,
    status: TaskState.TASK_STATE_UNSPECIFIED,
    pageToken: '',
    statusTimestampAfter: undefined,
  });
  return listed.tasks;
}

function remoteTaskInDoubt(send: EarlierSend, listing: A2AError): ApplicationFailure {
  return stageFailure(
    REMOTE_TASK_IN_DOUBT,
    `the message ${send.messageId} to the A2A agent ${send.agent} may have started a remote task: it was sent and ` +
      `no answer was recorded, and the agent can neither list its tasks (${listing.message}) nor dedupe message ` +
      `ids, so it is not sent again; ask the agent about context ${send.contextId} before deciding`,
    { agent: send.agent, message_id: send.messageId, context_id: send.contextId, list_refused: listing.reason },
  );
}

function requestMessage(messageId: string, contextId: string, content: { question: string; data?: unknown }): Message {
  const part = (value: Part['content']): Part => ({ content: value, metadata: undefined, filename: '', mediaType: '' });
  return {
    messageId,
    contextId,
    taskId: '',
    role: Role.ROLE_USER,
    parts: [
      part({ $case: 'text', value: content.question }),
      ...(content.data === undefined ? [] : [part({ $case: 'data', value: content.data })]),
    ],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

/** The newest artifact's type and body, for an agent that cannot read handrail's store. */
async function inputOf(store: Store, pkg: HandoffV1): Promise<{ type: string; body: unknown } | null> {
  const newest = newestArtifact(pkg);
  if (!newest) return null;
  const { text } = await readArtifactText(store, newest);
  return { type: newest.type, body: JSON.parse(text) as unknown };
}

/** Reads the remote task until it stops; a job cancelled meanwhile cancels the remote task too. */
async function untilStopped(
  client: Client,
  remote: RemoteTask,
  pollMs: number,
  signal: AbortSignal | undefined,
): Promise<Task> {
  if (remote.answer) return remote.answer;
  for (;;) {
    const task = await client.getTask({ tenant: '', id: remote.task_id });
    if (task.status && STOPPED.has(task.status.state)) return task;
    try {
      await sleep(pollMs, signal);
    } catch (cancelled) {
      await client.cancelTask({ tenant: '', id: remote.task_id, metadata: undefined }).catch((error: unknown) => {
        log.warn('the remote A2A task could not be cancelled', { task_id: remote.task_id, error: String(error) });
      });
      throw cancelled;
    }
  }
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason as Error);
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        reject(signal.reason as Error);
      },
      { once: true },
    );
  });
}

/** The remote answer's body, valid for the stage's output type, or a typed failure. */
function answerOf<S extends z.ZodType>(spec: A2aStageSpec<S>, task: Task): z.infer<S> {
  const state = task.status?.state ?? TaskState.TASK_STATE_UNSPECIFIED;
  const said = statusText(task);
  const details = { agent: spec.agent.url, task_id: task.id, state: TaskState[state], said };
  if (ASKING.has(state))
    throw remoteFailure(
      'RemoteInputRequired',
      `${spec.card.name}: the A2A agent asks for ${state === TaskState.TASK_STATE_AUTH_REQUIRED ? 'auth' : 'input'}: ${said || '(no message)'}`,
      details,
    );
  if (state !== TaskState.TASK_STATE_COMPLETED)
    throw remoteFailure(
      'RemoteTaskFailed',
      `${spec.card.name}: the A2A agent's task ${task.id} ended ${TaskState[state]}${said ? `: ${said}` : ''}`,
      details,
    );
  const body = bodyOf(task.artifacts);
  const parsed = spec.output.schema.safeParse(body);
  if (!parsed.success)
    throw remoteFailure(
      'RemoteOutputInvalid',
      `${spec.card.name}: the A2A agent's artifact is not a valid ${spec.output.type}: ${issueLines(parsed.error, '/', 5).join('; ')}`,
      { ...details, body: canonicalJson(body ?? null).slice(0, 2_000) },
    );
  return parsed.data as z.infer<S>;
}

/** The first data part of the newest artifact (or its text, parsed as JSON when it is JSON). */
function bodyOf(artifacts: readonly A2aArtifact[]): unknown {
  const parts = artifacts.at(-1)?.parts ?? [];
  const data = parts.find((p) => p.content?.$case === 'data');
  if (data?.content) return data.content.value as unknown;
  const text = parts.find((p) => p.content?.$case === 'text')?.content?.value;
  if (typeof text !== 'string') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

function statusText(task: Task): string {
  return (task.status?.message?.parts ?? [])
    .flatMap((p) => (p.content?.$case === 'text' ? [p.content.value] : []))
    .join(' ')
    .slice(0, 500);
}

/** What the agent reports the task cost, in its metadata: `cost_usd`, or handrail's own
 * `handrail.spent_usd` (a handrail server behind the agent card). */
export function reportedCostUsd(task: Pick<Task, 'metadata'>): number | undefined {
  const metadata = task.metadata as { cost_usd?: unknown; handrail?: { spent_usd?: unknown } } | undefined;
  const cost = metadata?.cost_usd ?? metadata?.handrail?.spent_usd;
  return typeof cost === 'number' && Number.isFinite(cost) && cost >= 0 ? cost : undefined;
}

/** The agent refused the message (a protocol error, not the network): sending it again will not help. */
async function refusedAsFailure<T>(agent: string, send: () => Promise<T>): Promise<T> {
  try {
    return await send();
  } catch (error) {
    if (error instanceof A2AError && REFUSALS.has(error.reason))
      throw remoteFailure('RemoteTaskFailed', `the A2A agent ${agent} refused the message: ${error.message}`, {
        agent,
        reason: error.reason,
      });
    throw error;
  }
}

const REFUSALS = new Set([
  'INVALID_PARAMS',
  'UNSUPPORTED_OPERATION',
  'CONTENT_TYPE_NOT_SUPPORTED',
  'VERSION_NOT_SUPPORTED',
  'EXTENSION_SUPPORT_REQUIRED',
]);
