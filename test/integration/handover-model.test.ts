/**
 * With a model configured, the prompt a stage sends is exactly what its edge's handover produced:
 * a local OpenAI-compatible endpoint records every request, and the test rebuilds the expected
 * messages from the job's log in the store (retrieve → draft: transcript_prepend; draft → judge:
 * a callable's history before the judge's own question).
 */
import type http from 'node:http';
import { createServer } from 'node:http';
import { completionAsStream } from '../../src/devtools/scripted-model';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { formatTranscript, TRANSCRIPT_SEPARATOR, USER_AGENT_ID } from '../../contracts';
import { readLog, type TurnRecord } from '../../activities/transcript-log';
import type { ChatMessage } from '../../src/worker/model';
import { codeRoot } from '../../src/config';
import { packageQuery, statusQuery } from '../../workflows/definitions';
import { cancelJob, startJob } from '../../src/operator/client';
import { jobRequest, startRail, type Rail } from '../helpers/rail';
import { triageActivitiesFor } from './fixtures/handover/activities';
import { HANDOVER_PIPELINES, triageHandovers } from './fixtures/handover/pipelines';
import { bundleRail } from '../../src/worker/bundle';

let rail: Rail;
let endpoint: http.Server;
const requests: { messages: ChatMessage[] }[] = [];
const MODEL_ENV = [
  'HANDRAIL_MODEL_BASE_URL',
  'HANDRAIL_MODEL',
  'HANDRAIL_MODEL_USD_PER_MTOK_IN',
  'HANDRAIL_MODEL_USD_PER_MTOK_OUT',
] as const;

/** Drafts get a markdown note, the judge a grade; both report token usage so the wallet pays. */
function reply(messages: ChatMessage[]): string {
  if (messages[0]?.content.startsWith('You grade')) return JSON.stringify({ answers_question: 1, note: 'answers it' });
  return '## Triage summary\n\nAnnual plans are refunded pro rata within 30 days [refund-policy.2]. Billing reviews the duplicate charge.';
}

beforeAll(async () => {
  endpoint = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    req.on('end', () => {
      const { messages, stream } = JSON.parse(body) as { messages: ChatMessage[]; stream?: boolean };
      requests.push({ messages });
      const completion = {
        choices: [{ index: 0, message: { role: 'assistant', content: reply(messages) }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 100, completion_tokens: 20 },
      };
      // A followed hop's model streams (src/worker/model/streaming.ts).
      if (stream) res.writeHead(200, { 'content-type': 'text/event-stream' }).end(completionAsStream(completion));
      else res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(completion));
    });
  });
  await new Promise<void>((resolve) => endpoint.listen(0, '127.0.0.1', resolve));
  // The worker reads its model from the environment at start-up (this file's process only).
  Object.assign(process.env, {
    HANDRAIL_MODEL_BASE_URL: `http://127.0.0.1:${(endpoint.address() as AddressInfo).port}/v1`,
    HANDRAIL_MODEL: 'recorder-1',
    HANDRAIL_MODEL_USD_PER_MTOK_IN: '1',
    HANDRAIL_MODEL_USD_PER_MTOK_OUT: '1',
  });
  const bundle = await bundleRail(path.join(codeRoot, 'test', 'integration', 'fixtures', 'handover', 'workflows.ts'));
  rail = await startRail({
    workflowBundle: bundle,
    pipelines: HANDOVER_PIPELINES,
    stageActivities: (deps) => triageActivitiesFor(triageHandovers, deps),
  });
});
afterAll(async () => {
  await rail?.stop();
  for (const name of MODEL_ENV) delete process.env[name];
  endpoint?.closeAllConnections();
  await new Promise((resolve) => endpoint?.close(resolve));
});

const textOf = (turn: TurnRecord, agent: string, role: string) => {
  const block = turn.messages.find((m) => m.agent_id === agent && m.message.role === role)?.message.content[0];
  return block?.type === 'text' ? block.text : undefined;
};

it('the draft and the judge send the model exactly what their edges handed over', async () => {
  const request = { ...jobRequest(), pipeline: 'triage-handovers' };
  const { handle } = await startJob(rail.client, request, rail);
  // Whatever the judge makes of the model's note, the job ends or waits for a human.
  let view = await handle.query(statusQuery);
  while (view.status === 'running') {
    await new Promise((r) => setTimeout(r, 100));
    view = await handle.query(statusQuery);
  }
  const turns = (await readLog(rail.store, await handle.query(packageQuery), request.job_id)).turns;
  const [intake, retrieve, draft, judge] = turns as [TurnRecord, TurnRecord, TurnRecord, TurnRecord];
  // Without an agent identity on their cards, stages speak as the model.
  expect(draft.agent_id).toBe('recorder-1');

  const draftCall = requests.find((r) => r.messages[0]?.content.startsWith('You write internal triage summaries'))!;
  expect(draftCall.messages).toEqual([
    { role: 'system', content: textOf(draft, 'recorder-1', 'system') },
    {
      role: 'user',
      content:
        formatTranscript([...intake.messages, ...retrieve.messages]) +
        TRANSCRIPT_SEPARATOR +
        textOf(draft, USER_AGENT_ID, 'user'),
    },
  ]);
  expect(draftCall.messages[1]!.content).toBe(draft.handover!.question_text);

  // keep-last-answer: the draft the model wrote, as the judge's history.
  const judgeCall = requests.find((r) => r.messages[0]?.content.startsWith('You grade'))!;
  expect(judgeCall.messages).toEqual([
    { role: 'system', content: textOf(judge, 'recorder-1', 'system') },
    { role: 'assistant', content: reply(draftCall.messages) },
    { role: 'user', content: textOf(judge, USER_AGENT_ID, 'user') },
  ]);
  if (view.status === 'escalated') await cancelJob(rail.client, request.job_id);
});
