/**
 * A stage that delegates to a remote A2A agent — one built with the official JS SDK's server
 * classes (test/helpers/a2a-agent.ts), not handrail's own server — on a real rail: the job pays the
 * task once, a worker SIGKILLed while the remote task runs leaves one remote task and one charge,
 * an artifact that fails the stage's output schema is refused, and an agent asking for input
 * becomes the job's escalation.
 */
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Message } from '@a2a-js/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { codeRoot } from '../../src/config';
import { decide, startJob } from '../../src/operator/client';
import { bundleRail } from '../../src/worker/bundle';
import { statusQuery } from '../../workflows/definitions';
import { dataOf, startCountingAgent, type AgentPlan, type CountingAgent } from '../helpers/a2a-agent';
import { forkWorker, sigkill } from '../helpers/worker-process';
import { jobRequest, startRail, uniqueId, until, waitForStatus, type Rail } from '../helpers/rail';
import { delegateActivities } from './fixtures/a2a-delegate/activities';
import {
  delegatePipeline,
  meteredPipeline,
  RESERVATION_USD,
  SUMMARY,
  TASK_PRICE_USD,
} from './fixtures/a2a-delegate/pipeline';

const FIXTURE = path.join(codeRoot, 'test', 'integration', 'fixtures', 'a2a-delegate');
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'handrail-a2a-delegate-'));
const bundlePath = path.join(dataDir, 'workflows.js');

/** What the agent does, by the ticket's subject; `hold` answers once the test opens the gate;
 * `twice` asks a second question once the first is answered (its follow-up carries no subject). */
let openGate: () => void = () => undefined;
let gate = new Promise<void>((resolve) => (openGate = resolve));
const askingTwice = new Map<string, number>();
function plan(message: Message): AgentPlan {
  const input = dataOf(message).input as { body?: { subject?: string; body?: string } } | undefined;
  const subject = input?.body?.subject ?? '';
  const answer = { summary: `Customer asks: ${subject}`, words: 3 };
  const asked = askingTwice.get(message.contextId);
  if (asked === 1) {
    askingTwice.set(message.contextId, 2);
    return { kind: 'input-required', question: 'And which month?' };
  }
  if (subject.startsWith('twice')) {
    askingTwice.set(message.contextId, 1);
    return { kind: 'input-required', question: 'Which invoice do you mean?' };
  }
  if (subject.startsWith('bad')) return { kind: 'complete', body: { summary: '', words: 'many' } };
  if (subject.startsWith('ask')) return { kind: 'input-required', question: 'Which invoice do you mean?' };
  if (subject.startsWith('hold')) return { kind: 'complete', body: answer, gate };
  if (subject.startsWith('pricey')) return { kind: 'complete', body: answer, costUsd: 0.2 };
  return { kind: 'complete', body: answer, costUsd: 0.012 };
}

let agent: CountingAgent;
let rail: Rail;
const workers: ChildProcess[] = [];

beforeAll(async () => {
  agent = await startCountingAgent(plan);
  const bundle = await bundleRail(path.join(FIXTURE, 'workflows.ts'));
  fs.writeFileSync(bundlePath, bundle.code);
  rail = await startRail({
    workflowBundle: bundle,
    pipelines: [delegatePipeline, meteredPipeline],
    stageActivities: delegateActivities(agent.url),
  });
});

afterAll(async () => {
  for (const worker of workers) if (worker.exitCode === null && worker.signalCode === null) worker.kill('SIGKILL');
  await rail?.stop();
  await agent?.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

function request(subject: string, pipeline = delegatePipeline.name) {
  const sample = jobRequest();
  return { ...sample, pipeline, ticket: { ...sample.ticket, subject } };
}

/** The remote tasks a job's stages started (the message id is the delivery key, `job_id:…`). */
const tasksOf = (jobId: string) => agent.received.filter((r) => r.messageId.startsWith(`${jobId}:`));

describe('a stage delegating to an A2A agent built with the official SDK', () => {
  it('completes with the remote artifact and pays the declared price once', async () => {
    const job = request('Refund for a double charge');
    const { handle } = await startJob(rail.client, job, rail);
    const result = await handle.result();
    expect(result).toMatchObject({ status: 'completed', reason: 'summarised by the remote agent' });
    expect(result.package.artifacts.at(-1)?.type).toBe(SUMMARY);
    const tasks = tasksOf(job.job_id);
    expect(tasks).toHaveLength(1);
    expect(tasks[0]!.messageId).toBe(`${job.job_id}:delegate:0`);
    // The card's declared price, though the agent reported another cost.
    expect(result.spent_usd).toBeCloseTo(TASK_PRICE_USD, 9);
    expect(result.package.tools_tried).toContainEqual({ name: 'a2a.summariser', ok: true });
  });

  it('with no declared price, pays what the agent reports, at most the reservation', async () => {
    const metered = await (await startJob(rail.client, request('Refund', meteredPipeline.name), rail)).handle.result();
    expect(metered.spent_usd).toBeCloseTo(0.012, 9);
    const pricey = await (await startJob(rail.client, request('pricey', meteredPipeline.name), rail)).handle.result();
    expect(pricey.status).toBe('completed');
    expect(pricey.spent_usd).toBeCloseTo(RESERVATION_USD, 9);
    expect(pricey.overspent_usd).toBeCloseTo(0.2 - RESERVATION_USD, 9);
  });

  it('refuses a remote artifact that fails the output schema: a typed failure, the job escalates', async () => {
    const job = request('bad answer please');
    const { handle } = await startJob(rail.client, job, rail);
    const view = await waitForStatus(handle, 'escalated');
    expect(view.escalation?.reasons[0]).toMatch(/delegate failed: RemoteOutputInvalid: .*not a valid summary\.v1/);
    // Non-retryable: one attempt, one remote task.
    expect(tasksOf(job.job_id)).toHaveLength(1);
    await handle.cancel();
  });

  it("the agent's input-required is this job's escalation; the human's answer goes to that task, which completes", async () => {
    const job = request('ask me something');
    const { handle } = await startJob(rail.client, job, rail);
    const view = await waitForStatus(handle, 'escalated');
    expect(view.escalation?.reasons[0]).toMatch(
      /delegate failed: RemoteInputRequired: .*asks for input: Which invoice do you mean\?/,
    );
    expect(view.escalation?.options).toContain('approve');
    const [asking] = tasksOf(job.job_id);

    await decide(rail.client, job.job_id, {
      action: 'approve',
      actor: 'ana',
      note: 'Invoice INV-7, the second charge',
    });
    const result = await handle.result();
    expect(result.status).toBe('completed');
    // The answer continued the task that asked: no second remote task, the note in its message.
    expect(tasksOf(job.job_id)).toEqual([asking]);
    const followUps = agent.followUps.filter((f) => f.taskId === asking!.taskId);
    expect(followUps).toHaveLength(1);
    expect(followUps[0]!.text).toMatch(/decided approve by ana\.\nDecision note: Invoice INV-7, the second charge/);
    expect(result.spent_usd).toBeCloseTo(TASK_PRICE_USD, 9);
    expect(result.acks.filter((a) => a.stage === 'delegate').map((a) => a.ack)).toEqual(['accepted', 'accepted']);
  });

  it('a remote task that asks again after an answer: the second answer goes to that task too — one remote task, one charge', async () => {
    const job = request('twice asked, about an invoice');
    const { handle } = await startJob(rail.client, job, rail);
    await waitForStatus(handle, 'escalated');
    const [asking] = tasksOf(job.job_id);
    await decide(rail.client, job.job_id, { action: 'approve', actor: 'ana', note: 'Invoice INV-7' });
    const reasonNow = async () => (await handle.query(statusQuery)).escalation?.reasons[0] ?? '';
    await until('the task asks a second time', async () => /And which month\?/.test(await reasonNow()));

    await decide(rail.client, job.job_id, { action: 'approve', actor: 'ana', note: 'November' });
    await until('the job ends or asks once more', async () => {
      const view = await handle.query(statusQuery);
      return (
        view.status === 'completed' || (view.status === 'escalated' && !/And which month\?/.test(await reasonNow()))
      );
    });
    // Both answers continued the task that asked: no second remote task was started or paid for.
    expect(tasksOf(job.job_id)).toEqual([asking]);
    expect(agent.followUps.filter((f) => f.taskId === asking!.taskId).map((f) => f.text)).toEqual([
      expect.stringMatching(/Decision note: Invoice INV-7/),
      expect.stringMatching(/Decision note: November/),
    ]);
    const result = await handle.result();
    expect(result.status).toBe('completed');
    expect(result.spent_usd).toBeCloseTo(TASK_PRICE_USD, 9);
  });
});

/** A rail worker in its own process on `taskQueue`; resolves once it polls. */
async function startWorker(taskQueue: string): Promise<ChildProcess> {
  const env = {
    DELEGATE_TASK_QUEUE: taskQueue,
    DELEGATE_BUNDLE: bundlePath,
    DELEGATE_DATA_DIR: dataDir,
    DELEGATE_AGENT_URL: agent.url,
  };
  const child = await forkWorker(path.join(FIXTURE, 'worker.ts'), env, 'delegate worker');
  workers.push(child);
  return child;
}

it(
  'a worker SIGKILLed while the remote task runs: the retry resumes that task — one remote task, one charge',
  { timeout: 120_000 },
  async () => {
    const taskQueue = uniqueId('a2a-delegate');
    const first = await startWorker(taskQueue);
    const job = request('hold until the test says');
    const { handle } = await startJob(rail.client, job, { pipelines: rail.pipelines!, taskQueue });
    // The first attempt sent the message and is reading the remote task.
    await until('the first worker reads the remote task', async () => {
      const task = tasksOf(job.job_id)[0];
      return task !== undefined && (agent.reads.get(task.taskId) ?? 0) > 0;
    });
    await sigkill(first);
    const readsBefore = agent.reads.get(tasksOf(job.job_id)[0]!.taskId)!;

    await startWorker(taskQueue);
    // The second attempt reads the same remote task (it sent nothing), which then completes.
    await until(
      'the retried attempt reads the same remote task',
      async () => agent.reads.get(tasksOf(job.job_id)[0]!.taskId)! > readsBefore,
    );
    openGate();
    const result = await handle.result();
    gate = new Promise<void>((resolve) => (openGate = resolve));

    expect(result.status).toBe('completed');
    expect(tasksOf(job.job_id)).toHaveLength(1);
    expect(result.spent_usd).toBeCloseTo(TASK_PRICE_USD, 9);
    expect(result.acks.filter((a) => a.stage === 'delegate').map((a) => a.ack)).toEqual(['accepted']);
    // The retry was Temporal's: the first attempt timed out on its heartbeat, the second completed.
    const started = ((await handle.fetchHistory()).events ?? []).flatMap((e) =>
      e.activityTaskStartedEventAttributes?.attempt ? [e.activityTaskStartedEventAttributes.attempt] : [],
    );
    expect(started).toContain(2);
  },
);
