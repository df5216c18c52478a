/**
 * runA2aStage outside an activity, against an agent on the official SDK's server classes: the
 * paths a SIGKILL leaves that the integration test does not reach — an attempt that noted it was
 * sending and died before recording the task — a remote task that failed, and reported costs.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Role } from '@a2a-js/sdk';
import { ClientFactory } from '@a2a-js/sdk/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REMOTE_TASK_STEP, reportedCostUsd, runA2aStage } from '../../../activities/a2a-stage';
import type { StageTurn } from '../../../activities/turn';
import type { HandoffV1 } from '../../../contracts';
import { openStore, type Store } from '../../../src/worker/store';
import { startCountingAgent, type CountingAgent } from '../../helpers/a2a-agent';
import { delegateStage, SUMMARY, TASK_PRICE_USD } from '../../integration/fixtures/a2a-delegate/pipeline';
import { Summary } from '../../integration/fixtures/a2a-delegate/activities';

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'handrail-a2a-stage-'));
let store: Store;
let agent: CountingAgent;

beforeAll(async () => {
  store = await openStore({ dataDir });
  agent = await startCountingAgent(() => ({ kind: 'complete', body: { summary: 'a double charge', words: 3 } }));
});
afterAll(async () => {
  await agent?.close();
  await store?.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

/** A turn that asks nothing of the job's log: the question as handed over, the reply dropped. */
const turnFor = (deliveryKey: string) =>
  ({
    deliveryKey,
    prompt: async ({ question }: { question: string }) => ({ questionText: question }),
    reply: () => undefined,
  }) as unknown as StageTurn;

const pkg = (jobId: string) => ({ job_id: jobId, artifacts: [] }) as unknown as HandoffV1;

const spec = (url: string) => ({
  card: delegateStage,
  agent: { url, grant: 'a2a.summariser' },
  question: 'Summarise this ticket.',
  output: { type: SUMMARY, schema: Summary },
  pollMs: 20,
});

describe('runA2aStage', () => {
  it('an attempt that died after sending, before recording the task: the next finds it by its context, sends nothing', async () => {
    const key = 'job-died:delegate:0';
    // The first attempt: noted it was sending, and the message reached the agent.
    await store.recordStageStep(key, 'a2a:sending', key);
    const client = await new ClientFactory().createFromUrl(agent.url);
    await client.sendMessage({
      tenant: '',
      message: {
        messageId: key,
        contextId: `ctx-${key}`,
        taskId: '',
        role: Role.ROLE_USER,
        parts: [],
        metadata: undefined,
        extensions: [],
        referenceTaskIds: [],
      },
      configuration: undefined,
      metadata: undefined,
    });
    expect(agent.received.filter((r) => r.messageId === key)).toHaveLength(1);

    const output = await runA2aStage(store, pkg('job-died'), turnFor(key), spec(agent.url));
    expect(output.body).toEqual({ summary: 'a double charge', words: 3 });
    expect(output.cost_usd).toBe(TASK_PRICE_USD);
    expect(agent.received.filter((r) => r.messageId === key)).toHaveLength(1);
    expect(agent.methods).toContain('ListTasks');
    const recorded = JSON.parse((await store.findStageSteps(key)).get(REMOTE_TASK_STEP)!) as { task_id: string };
    expect(recorded.task_id).toBe(agent.received.find((r) => r.messageId === key)!.taskId);
  });

  it('a remote task that ends failed is RemoteTaskFailed, with what the agent said', async () => {
    const refusing = await startCountingAgent(() => ({ kind: 'fail', reason: 'no such skill' }));
    try {
      await expect(
        runA2aStage(store, pkg('job-refused'), turnFor('job-refused:delegate:0'), spec(refusing.url)),
      ).rejects.toMatchObject({ type: 'RemoteTaskFailed', message: expect.stringMatching(/FAILED: no such skill/) });
    } finally {
      await refusing.close();
    }
  });

  it('reads a reported cost from the task metadata, its own or a handrail server’s', () => {
    expect(reportedCostUsd({ metadata: { cost_usd: 0.02 } })).toBe(0.02);
    expect(reportedCostUsd({ metadata: { handrail: { spent_usd: 0.019 } } })).toBe(0.019);
    expect(reportedCostUsd({ metadata: { cost_usd: -1 } })).toBeUndefined();
    expect(reportedCostUsd({ metadata: undefined })).toBeUndefined();
  });
});
