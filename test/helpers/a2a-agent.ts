/**
 * A small remote A2A agent built with the official JS SDK's server classes (DefaultRequestHandler,
 * InMemoryTaskStore, JsonRpcTransportHandler) on node:http — not handrail's server — for tests of
 * a stage that delegates to one. It counts the tasks it receives and how often each is read, and
 * does with each message what the test says: answer an artifact (after a gate the test opens),
 * ask for input, or fail.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { AgentCard, Role, TaskState, type Message, type Task } from '@a2a-js/sdk';
import {
  AgentEvent,
  DefaultRequestHandler,
  InMemoryTaskStore,
  JsonRpcTransportHandler,
  ServerCallContext,
  type AgentExecutor,
} from '@a2a-js/sdk/server';
import { dataPart, textPart } from '../../src/servers/a2a/task-view';

export type AgentPlan =
  | { kind: 'complete'; body: unknown; costUsd?: number; gate?: Promise<void> }
  | { kind: 'input-required'; question: string }
  | { kind: 'fail'; reason: string };

export interface CountingAgent {
  url: string;
  /** Each task the agent received (its id, and the message that started it), in order. */
  received: { taskId: string; messageId: string }[];
  /** Each message that continued a task (its id, and its text): an answer to input-required. */
  followUps: { taskId: string; text: string }[];
  /** How many times each task was read (GetTask). */
  reads: Map<string, number>;
  /** Every JSON-RPC call's method, in order. */
  methods: string[];
  close(): Promise<void>;
}

const RPC_PATH = '/a2a';

function agentMessage(task: Pick<Task, 'id' | 'contextId'>, text: string): Message {
  return {
    messageId: `${task.id}-${Date.now()}`,
    contextId: task.contextId,
    taskId: task.id,
    role: Role.ROLE_AGENT,
    parts: [textPart(text)],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

const textOf = (message: Message) =>
  message.parts.flatMap((p) => (p.content?.$case === 'text' ? [p.content.value] : [])).join('\n');

/** The message's data part (what a delegating stage sends: its package and input). */
export function dataOf(message: Message): Record<string, unknown> {
  const part = message.parts.find((p) => p.content?.$case === 'data');
  return (part?.content?.value ?? {}) as Record<string, unknown>;
}

function executor(
  plan: (message: Message) => AgentPlan,
  { received, followUps }: Pick<CountingAgent, 'received' | 'followUps'>,
): AgentExecutor {
  return {
    async execute(context, bus) {
      if (!context.task) received.push({ taskId: context.taskId, messageId: context.userMessage.messageId });
      else followUps.push({ taskId: context.taskId, text: textOf(context.userMessage) });
      const task: Task = {
        id: context.taskId,
        contextId: context.contextId,
        status: { state: TaskState.TASK_STATE_WORKING, message: undefined, timestamp: new Date().toISOString() },
        artifacts: [],
        history: [context.userMessage],
        metadata: undefined,
      };
      bus.publish(AgentEvent.task(task));
      const todo = plan(context.userMessage);
      if (todo.kind === 'complete') await todo.gate;
      const status = (state: TaskState, text?: string) => ({
        state,
        message: text === undefined ? undefined : agentMessage(task, text),
        timestamp: new Date().toISOString(),
      });
      if (todo.kind === 'complete')
        bus.publish(
          AgentEvent.task({
            ...task,
            status: status(TaskState.TASK_STATE_COMPLETED),
            artifacts: [
              {
                artifactId: `${task.id}-answer`,
                name: 'answer',
                description: '',
                parts: [dataPart(todo.body)],
                metadata: undefined,
                extensions: [],
              },
            ],
            metadata: todo.costUsd === undefined ? undefined : { cost_usd: todo.costUsd },
          }),
        );
      else if (todo.kind === 'input-required')
        bus.publish(AgentEvent.task({ ...task, status: status(TaskState.TASK_STATE_INPUT_REQUIRED, todo.question) }));
      else bus.publish(AgentEvent.task({ ...task, status: status(TaskState.TASK_STATE_FAILED, todo.reason) }));
      bus.finished();
    },
    async cancelTask(taskId, bus) {
      bus.publish(
        AgentEvent.statusUpdate({
          taskId,
          contextId: '',
          status: { state: TaskState.TASK_STATE_CANCELED, message: undefined, timestamp: new Date().toISOString() },
          metadata: undefined,
        }),
      );
      bus.finished();
    },
  };
}

export async function startCountingAgent(plan: (message: Message) => AgentPlan): Promise<CountingAgent> {
  const received: CountingAgent['received'] = [];
  const followUps: CountingAgent['followUps'] = [];
  const reads = new Map<string, number>();
  const methods: string[] = [];
  let base = '';
  const card = (): AgentCard => ({
    name: 'counting-agent',
    description: 'A test agent on the official A2A SDK: counts the tasks it receives.',
    supportedInterfaces: [
      { url: `${base}${RPC_PATH}`, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '1.0' },
    ],
    provider: undefined,
    version: '1',
    capabilities: { streaming: false, pushNotifications: false, extendedAgentCard: false, extensions: [] },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ['application/json', 'text/plain'],
    defaultOutputModes: ['application/json'],
    skills: [
      {
        id: 'summarise',
        name: 'summarise',
        description: 'summarises a ticket',
        tags: [],
        examples: [],
        inputModes: [],
        outputModes: [],
        securityRequirements: [],
      },
    ],
    signatures: [],
  });
  const handler = new DefaultRequestHandler(card(), new InMemoryTaskStore(), executor(plan, { received, followUps }));
  const transport = new JsonRpcTransportHandler(handler);
  const server = http.createServer((req, res) => {
    const reply = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (req.method === 'GET' && req.url === '/.well-known/agent-card.json') return reply(200, AgentCard.toJSON(card()));
    if (req.method !== 'POST' || req.url !== RPC_PATH) return reply(404, { error: 'not found' });
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { method?: string; params?: { id?: string } };
      methods.push(String(body.method));
      if (body.method === 'GetTask' && body.params?.id) reads.set(body.params.id, (reads.get(body.params.id) ?? 0) + 1);
      void transport.handle(body, new ServerCallContext()).then((answer) => reply(200, answer));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: base,
    received,
    followUps,
    reads,
    methods,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
