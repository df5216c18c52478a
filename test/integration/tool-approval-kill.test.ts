/**
 * Ask before acting, through SIGKILLs: the research job's worker (a process of its own, its
 * researcher asking before each library search) is killed while a search waits for a human, and
 * again after the last word, while the researcher's next model step is in flight (the model holds
 * that request: the kill lands there by a hook, not by timing). The job completes; every call was
 * decided once (no call asked twice after a kill); the model's first step was asked once in all,
 * and only the step that was in flight at the kill is asked again.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { SYSTEM } from '../../activities/research-brief/stages';
import { startWorkerProcess, type WorkerProcess } from '../../bench/workers';
import { handrailDataConverter } from '../../src/codec';
import { startResearchModel, type ResearchModel } from '../../src/devtools/research-model';
import { decide, startJob } from '../../src/operator/client';
import { statusQuery, type JobStatusView } from '../../workflows/definitions';
import { jobRequest, uniqueId } from '../helpers/rail';

let model: ResearchModel;
let connection: Connection;
let client: Client;
const workers: WorkerProcess[] = [];
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'handrail-approval-kill-'));

beforeAll(async () => {
  model = await startResearchModel();
  connection = await Connection.connect({ address: inject('temporalAddress') });
  client = new Client({ connection, namespace: inject('namespace'), dataConverter: handrailDataConverter() });
});
afterAll(async () => {
  await Promise.all(workers.map((w) => w.kill()));
  await model?.close();
  await connection?.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

const worker = async (taskQueue: string) => {
  const started = await startWorkerProcess({
    kind: 'handrail',
    address: inject('temporalAddress'),
    taskQueue,
    dataDir,
    bundlePath: inject('workflowBundlePath'),
    env: {
      HANDRAIL_MODEL_BASE_URL: model.baseUrl,
      HANDRAIL_MODEL: 'research-offline',
      HANDRAIL_MODEL_USD_PER_MTOK_IN: '1',
      HANDRAIL_MODEL_USD_PER_MTOK_OUT: '4',
      HANDRAIL_RESEARCH_APPROVALS: 'search',
    },
  });
  workers.push(started);
  return started;
};

const researcher = (r: ResearchModel['requests'][number]) =>
  r.messages.some((m) => m.role === 'system' && m.content === SYSTEM.researcher);
const toolResults = (r: ResearchModel['requests'][number]) => r.messages.filter((m) => m.role === 'tool').length;

it(
  'a worker killed while a call waits and one killed after the last word, mid-step: the job completes, each call decided once, no step asked twice but the one in flight',
  { timeout: 180_000 },
  async () => {
    const taskQueue = uniqueId('approval-kill');
    let running = await worker(taskQueue);
    const request = { ...jobRequest({ job_id: uniqueId('approval-kill') }), pipeline: 'research-brief' };
    const { handle } = await startJob(client, request, { taskQueue });
    // The next call the job waits on: a decided one may still show for a moment (its word is taken,
    // the rail has not moved on yet), and a word on it again is refused as already being applied.
    const decided = new Set<string>();
    const waiting = async (): Promise<JobStatusView | undefined> => {
      const deadline = Date.now() + 60_000;
      while (Date.now() < deadline) {
        if ((await handle.describe()).status.name !== 'RUNNING') return undefined;
        const view = await handle.query(statusQuery).catch(() => undefined);
        const call = view?.escalation?.tool_call;
        if (view?.status === 'escalated' && call && !decided.has(call.digest)) return view;
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error('the job neither waited on a call nor ended');
    };

    // Killed while the first call waits; the next worker takes the decision.
    let view = (await waiting())!;
    const calls = [view.escalation!.tool_call!.digest];
    await running.kill();
    running = await worker(taskQueue);
    // The researcher's step after the searches is held once the last call is approved: the kill lands there.
    const answer = model.answer;
    let reachedStep2: () => void = () => undefined;
    const step2 = new Promise<void>((resolve) => (reachedStep2 = resolve));
    let release: () => void = () => undefined;
    const released = new Promise<void>((resolve) => (release = resolve));
    let held = false;
    model.answer = async (body) => {
      if (!held && researcher(body) && toolResults(body) > 0) {
        held = true;
        reachedStep2();
        await released;
      }
      return answer(body);
    };
    for (;;) {
      await decide(client, request.job_id, {
        action: 'approve',
        actor: 'ops.lead',
        tool_call: { digest: view.escalation!.tool_call!.digest, verdict: 'approve' },
      });
      decided.add(view.escalation!.tool_call!.digest);
      const next = await Promise.race([waiting(), step2.then(() => undefined)]);
      if (!next) break;
      view = next;
      calls.push(view.escalation!.tool_call!.digest);
    }
    await step2;
    await running.kill();
    running = await worker(taskQueue);
    release();
    const result = await handle.result();

    expect(result.status).toBe('completed');
    // Each call waited once and was decided once, kills or not.
    expect(new Set(calls).size).toBe(calls.length);
    expect(result.acks.filter((a) => a.actor === 'ops.lead' && a.stage === 'human')).toHaveLength(calls.length);
    const asked = model.requests.filter(researcher);
    expect(asked.filter((r) => toolResults(r) === 0)).toHaveLength(1);
    expect(asked.filter((r) => toolResults(r) > 0)).toHaveLength(2);
  },
);
