/**
 * A delegating stage pays one remote task per delivery even when its worker dies at the worst
 * moment. Each death is injected at an exact point — a store that fails the one write the test
 * names, as a worker killed right before it would — then the same delivery is retried on the real
 * store, as Temporal retries the activity, and the agent (the official SDK's server classes,
 * counting on its own side) says how many tasks it was given.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Role, type Message } from '@a2a-js/sdk';
import { ClientFactory } from '@a2a-js/sdk/client';
import { UnsupportedOperationError } from '@a2a-js/sdk/errors';
import { DefaultRequestHandler } from '@a2a-js/sdk/server';
import { MockActivityEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { REMOTE_TASK_STEP, runA2aStage, type A2aStageSpec } from '../../../activities/a2a-stage';
import type { StageOutput } from '../../../activities/stage';
import type { StageTurn } from '../../../activities/turn';
import type { HandoffV1 } from '../../../contracts';
import type { HookResult } from '../../../contracts/stages';
import { ESCALATION_RECORD_DECIDED_EVENT } from '../../../contracts/escalation-record-delta';
import { openStore, WAITING_STEPS_PREFIX, type Store } from '../../../src/worker/store';
import { dataOf, startCountingAgent, type AgentPlan, type CountingAgent } from '../../helpers/a2a-agent';
import { delegateStage, SUMMARY, TASK_PRICE_USD } from '../../integration/fixtures/a2a-delegate/pipeline';
import { Summary } from '../../integration/fixtures/a2a-delegate/activities';

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'handrail-a2a-pay-once-'));
let store: Store;

beforeAll(async () => {
  store = await openStore({ dataDir });
});
afterAll(async () => {
  await store?.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

const ANSWER = { summary: 'a double charge', words: 3 };

/** A first message (it carries the package) asks which invoice; the human's answer completes. */
const askThenAnswer = (message: Message): AgentPlan =>
  'handoff' in dataOf(message)
    ? { kind: 'input-required', question: 'Which invoice do you mean?' }
    : { kind: 'complete', body: ANSWER };

const turnFor = (deliveryKey: string, hooks: HookResult[] = []) =>
  ({
    deliveryKey,
    hooks,
    prompt: async ({ question }: { question: string }) => ({ questionText: question }),
    reply: () => undefined,
  }) as unknown as StageTurn;

/** The hook a human's decision brings to the hop it retries. */
const decided = (text: string): HookResult[] => [{ event: ESCALATION_RECORD_DECIDED_EVENT, text }];

const pkg = (jobId: string) => ({ job_id: jobId, artifacts: [] }) as unknown as HandoffV1;

/** One attempt of the stage activity for `deliveryKey` (a job id and its hop), on `on`'s store. */
function attempt(
  on: Store,
  deliveryKey: string,
  stage: A2aStageSpec<typeof Summary>,
  hooks: HookResult[] = [],
): Promise<StageOutput> {
  const jobId = deliveryKey.slice(0, deliveryKey.indexOf(':'));
  return new MockActivityEnvironment().run(() => runA2aStage(on, pkg(jobId), turnFor(deliveryKey, hooks), stage));
}

const spec = (url: string): A2aStageSpec<typeof Summary> => ({
  card: delegateStage,
  agent: { url, grant: 'a2a.summariser' },
  question: 'Summarise this ticket.',
  output: { type: SUMMARY, schema: Summary },
  pollMs: 20,
});

class WorkerDied extends Error {
  override readonly name = 'WorkerDied';
}

/**
 * The store, except that the first record of `step` under `deliveryKey` throws before it is
 * written: the worker died right there, every earlier write kept, nothing after it done.
 */
function diesBefore(real: Store, deliveryKey: string, step: string): Store {
  let died = false;
  const recordStageStep: Store['recordStageStep'] = async (key, name, content) => {
    if (!died && key === deliveryKey && name === step) {
      died = true;
      throw new WorkerDied(`died before recording ${step} under ${deliveryKey}`);
    }
    return real.recordStageStep(key, name, content);
  };
  return new Proxy(real, {
    get(target, prop) {
      if (prop === 'recordStageStep') return recordStageStep;
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/** The tasks the agent was given for a job (message ids are delivery keys, `job:stage:hop`). */
const tasksOf = (agent: CountingAgent, jobId: string) =>
  agent.received.filter((r) => r.messageId.startsWith(`${jobId}:`));

describe('runA2aStage pays one remote task per delivery', () => {
  it('a worker that died after noting the answer, before journalling the task: the retry follows that task', async () => {
    const agent = await startCountingAgent(askThenAnswer);
    try {
      const job = 'job-answer-died';
      await expect(attempt(store, `${job}:delegate:0`, spec(agent.url))).rejects.toMatchObject({
        type: 'RemoteInputRequired',
      });
      const [asking] = tasksOf(agent, job);

      // The human's decision retries the hop; its first attempt answers the task, notes that it did,
      // and dies before the task is journalled under its delivery key.
      const answering = `${job}:delegate:2`;
      const dying = diesBefore(store, answering, REMOTE_TASK_STEP);
      await expect(attempt(dying, answering, spec(agent.url), decided('Invoice INV-7'))).rejects.toBeInstanceOf(
        WorkerDied,
      );
      const waiting = await store.findStageSteps(`${WAITING_STEPS_PREFIX}a2a-input:${job}:delegate`);
      expect([...waiting.keys()].filter((s) => s.startsWith('answered:'))).toHaveLength(1);
      expect(agent.followUps.filter((f) => f.taskId === asking!.taskId)).toHaveLength(1);

      const retried = await attempt(store, answering, spec(agent.url), decided('Invoice INV-7'))
        .then((output) => output.body)
        .catch((error: unknown) => error);
      expect(tasksOf(agent, job)).toEqual([asking]);
      expect(agent.followUps.filter((f) => f.taskId === asking!.taskId)).toHaveLength(1);
      expect(retried).toEqual(ANSWER);
    } finally {
      await agent.close();
    }
  });

  it('an agent that neither lists tasks nor dedupes message ids: a send whose outcome is unknown is not repeated, the stage fails RemoteTaskInDoubt', async () => {
    // The SDK's handler with ListTasks unsupported, as handrail's own server answers it.
    const unlisted = vi
      .spyOn(DefaultRequestHandler.prototype, 'listTasks')
      .mockRejectedValue(new UnsupportedOperationError('ListTasks is not supported'));
    const agent = await startCountingAgent(() => ({ kind: 'complete', body: ANSWER }));
    try {
      await expectNoDedupe(agent);
      const job = 'job-send-died';
      const key = `${job}:delegate:0`;
      // The first attempt noted that it was sending, sent, and died before recording the task.
      await expect(attempt(diesBefore(store, key, REMOTE_TASK_STEP), key, spec(agent.url))).rejects.toBeInstanceOf(
        WorkerDied,
      );
      expect(tasksOf(agent, job)).toHaveLength(1);

      const retried = await attempt(store, key, spec(agent.url)).catch((error: unknown) => error);
      expect(agent.methods).toContain('ListTasks');
      expect(tasksOf(agent, job)).toHaveLength(1);
      expect(retried).toMatchObject({
        type: 'RemoteTaskInDoubt',
        nonRetryable: true,
        message: expect.stringMatching(/may have started a remote task/),
        details: [expect.objectContaining({ agent: agent.url, message_id: key, context_id: `ctx-${key}` })],
      });
    } finally {
      unlisted.mockRestore();
      await agent.close();
    }
  });

  it('an agent the configuration says dedupes message ids is sent the message again, under the same id', async () => {
    const unlisted = vi
      .spyOn(DefaultRequestHandler.prototype, 'listTasks')
      .mockRejectedValue(new UnsupportedOperationError('ListTasks is not supported'));
    const agent = await startCountingAgent(() => ({ kind: 'complete', body: ANSWER }));
    try {
      const job = 'job-send-died-dedupe';
      const key = `${job}:delegate:0`;
      const trusting = {
        ...spec(agent.url),
        agent: { url: agent.url, grant: 'a2a.summariser', dedupesMessageIds: true },
      };
      await expect(attempt(diesBefore(store, key, REMOTE_TASK_STEP), key, trusting)).rejects.toBeInstanceOf(WorkerDied);
      const output = await attempt(store, key, trusting);
      expect(output.cost_usd).toBe(TASK_PRICE_USD);
      // This agent does not keep that promise: the configuration is what vouched for it.
      expect(tasksOf(agent, job).map((t) => t.messageId)).toEqual([key, key]);
    } finally {
      unlisted.mockRestore();
      await agent.close();
    }
  });
});

/** The premise: the agent starts a second task for a message id it has seen. */
async function expectNoDedupe(agent: CountingAgent): Promise<void> {
  const client = await new ClientFactory().createFromUrl(agent.url);
  const probe = 'probe:delegate:0';
  const message: Message = {
    messageId: probe,
    contextId: `ctx-${probe}`,
    taskId: '',
    role: Role.ROLE_USER,
    parts: [],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
  for (let i = 0; i < 2; i++)
    await client.sendMessage({ tenant: '', message, configuration: undefined, metadata: undefined });
  expect(agent.received.filter((r) => r.messageId === probe)).toHaveLength(2);
}
