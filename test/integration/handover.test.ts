/**
 * Handover on the dev server: the reference relay with a different strategy on each
 * edge (test/integration/fixtures/handover/), the job's log in the store, what each stage was
 * handed, the per-edge token cap (refused, or falling back to a trace file), a trace that cannot
 * be written — and none of it in the workflow history.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  formatTranscript,
  isTranscriptUri,
  TRANSCRIPT_SEPARATOR,
  USER_AGENT_ID,
  type HandoffV1,
  type JobResult,
  type TaggedMessage,
} from '../../contracts';
import { readLog, type TurnRecord } from '../../activities/transcript-log';
import { encodedHistory } from '../../bench/history';
import { codeRoot } from '../../src/config';
import { cancelJob, startJob } from '../../src/operator/client';
import { decideUpdate } from '../../workflows/definitions';
import { jobRequest, startRail, stageActivities as scheduledStages, waitForStatus, type Rail } from '../helpers/rail';
import { triageActivitiesFor } from './fixtures/handover/activities';
import { HANDOVER_PIPELINES, keepLastAnswer, triageHandovers } from './fixtures/handover/pipelines';
import { bundleRail } from '../../src/worker/bundle';

let rail: Rail;
const workspace = fs.mkdtempSync(path.join(os.tmpdir(), 'handrail-workspace-'));

beforeAll(async () => {
  const bundle = await bundleRail(path.join(codeRoot, 'test', 'integration', 'fixtures', 'handover', 'workflows.ts'));
  rail = await startRail({
    workflowBundle: bundle,
    pipelines: HANDOVER_PIPELINES,
    stageActivities: (deps) => triageActivitiesFor(triageHandovers, deps),
    workspace,
  });
});
afterAll(async () => {
  await rail?.stop();
  fs.rmSync(workspace, { recursive: true, force: true });
});

const transcriptOf = (turns: readonly TurnRecord[]) => formatTranscript(turns.flatMap((t) => t.messages));
const questionOf = (turn: TurnRecord) => {
  const asked = turn.messages.find((m) => m.agent_id === USER_AGENT_ID)!.message.content[0]!;
  return asked.type === 'text' ? asked.text : '';
};
const logOf = async (pkg: HandoffV1) => (await readLog(rail.store, pkg, pkg.job_id)).turns;

async function run(pipeline: string): Promise<{ result: JobResult; job_id: string }> {
  const request = { ...jobRequest(), pipeline };
  const { handle } = await startJob(rail.client, request, rail);
  return { result: await handle.result(), job_id: request.job_id };
}

describe('handover per edge, on the dev server', () => {
  it('each edge hands the next stage the conversation in its own form; the log lives in the store', async () => {
    const { result, job_id } = await run('triage-handovers');
    expect(result.status).toBe('completed');
    expect(result.package.memory_refs.filter(isTranscriptUri)).toHaveLength(1);
    const turns = await logOf(result.package);
    expect(turns.map((t) => t.stage)).toEqual(['intake', 'retrieve', 'draft', 'judge', 'writeback']);
    const [intake, retrieve, draft, judge, writeback] = turns as [
      TurnRecord,
      TurnRecord,
      TurnRecord,
      TurnRecord,
      TurnRecord,
    ];
    expect(intake.handover).toBeUndefined();

    // intake → retrieve: transcript_append — the question, the separator, the transcript.
    expect(retrieve.handover).toMatchObject({ used: 'transcript_append', history: [] });
    expect(retrieve.handover!.question_text).toBe(questionOf(retrieve) + TRANSCRIPT_SEPARATOR + transcriptOf([intake]));

    // retrieve → draft: transcript_prepend — the transcript of both earlier turns, then the question.
    expect(draft.handover!.question_text).toBe(
      transcriptOf([intake, retrieve]) + TRANSCRIPT_SEPARATOR + questionOf(draft),
    );
    expect(draft.handover!.question_text).toContain(
      "[retrieve:assistant:tool_use] helpcenter.search(limit=4, terms=['refunds', ",
    );

    // draft → judge: the registered callable — its history, the question unchanged.
    const before: TaggedMessage[] = [intake, retrieve, draft].flatMap((t) => t.messages);
    expect(judge.handover).toMatchObject({ used: 'callable:keep-last-answer', question_text: questionOf(judge) });
    expect(judge.handover!.history).toEqual(keepLastAnswer(before, undefined as never));

    // judge → writeback: transcript_materialize — a trace file in the job's turn folder.
    const hop = result.acks.find((a) => a.stage === 'writeback')!.hop;
    const hash = crypto
      .createHash('sha256')
      .update(transcriptOf([intake, retrieve, draft, judge]))
      .digest('hex')
      .slice(0, 10);
    const trace = path.join(
      workspace,
      job_id.replace(/[^a-zA-Z0-9_-]/g, '_'),
      'offline',
      `turn_${hop}`,
      'traces',
      `writeback_${hash}_handover_turn${hop}_trace.txt`,
    );
    expect(writeback.handover!.question_text).toContain(`Trace file path: ${trace}\n`);
    expect(writeback.handover!.question_text.endsWith(`---\n\n${questionOf(writeback)}`)).toBe(true);
    const file = fs.readFileSync(trace, 'utf8');
    expect(file).toContain('<turn number="1">');
    expect(file).toContain('<assistant agent="judge">');
    expect(file).toContain('<tool_call name="helpcenter.search">');

    // Nothing of the conversation is in Temporal history: only the transcript's URI.
    const { text } = encodedHistory(await rail.client.workflow.getHandle(job_id).fetchHistory());
    expect(text).toContain(result.package.memory_refs.find(isTranscriptUri)!);
    for (const said of [
      '[retrieve:assistant:tool_use]',
      'Trace file path:',
      'Find help-center passages for:',
      draft.handover!.question_text.slice(0, 80),
    ]) {
      expect(text).not.toContain(said);
    }
  });

  it('raw history on one edge; a cap the prepend exceeds refuses the hop (rejected_budget) before the stage works, and the job waits for a human', async () => {
    const request = { ...jobRequest(), pipeline: 'triage-capped' };
    const { handle } = await startJob(rail.client, request, rail);
    const view = await waitForStatus(handle, 'escalated');
    const acks = await handle.query<{ ack: string; stage: string; reason: string; delivery_key: string }[]>('acks');
    const refusal = acks.find((a) => a.ack === 'rejected_budget')!;
    expect(refusal).toMatchObject({
      stage: 'draft',
      reason: expect.stringMatching(
        /^context_budget_exceeded: .*over the edge's cap of 40 \(strategy transcript_prepend\)/,
      ),
    });
    expect(view.escalation?.reasons.join(' ')).toMatch(/ContextBudgetExceeded/);
    expect(view.escalation?.options).toEqual(['approve', 'reject', 'revise']);
    // Refused once, not retried; and draft recorded nothing (nothing spent on it).
    expect((await scheduledStages(rail.client, request.job_id)).filter((s) => s === 'draft')).toHaveLength(1);
    expect(await rail.store.findStageRecord(refusal.delivery_key)).toBeNull();
    expect(view.spent_usd).toBeCloseTo(0.001 + 0.002, 6);

    const pkg = await handle.query<HandoffV1>('package');
    const [intake, retrieve] = await logOf(pkg);
    // intake → retrieve: `history` — intake's messages as they are.
    expect(retrieve!.handover).toMatchObject({ used: 'history', history: intake!.messages.map((m) => m.message) });

    // A human's approve retries the hop over the same edge: same handover, same cap, refused again.
    await handle.executeUpdate(decideUpdate, { args: [{ action: 'approve', actor: 'ops.lead' }] });
    const deadline = Date.now() + 30_000;
    let refusals = 1;
    while (refusals < 2 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
      refusals = (await handle.query<{ ack: string }[]>('acks')).filter((a) => a.ack === 'rejected_budget').length;
    }
    expect(refusals).toBe(2);
    await cancelJob(rail.client, request.job_id);
  });

  it('over the cap with overflow: transcript_materialize, the hop falls back to a trace file and the job completes', async () => {
    const { result } = await run('triage-fallback');
    expect(result.status).toBe('completed');
    const writeback = (await logOf(result.package)).find((t) => t.stage === 'writeback')!;
    expect(writeback.handover).toMatchObject({ used: 'transcript_materialize', fell_back: true });
    expect(writeback.handover!.tokens).toBeLessThanOrEqual(300);
    const trace = /Trace file path: (\S+)/.exec(writeback.handover!.question_text)![1]!;
    expect(fs.existsSync(trace)).toBe(true);
  });

  it('a trace that cannot be written fails the hop with the path named, writes nothing, and the job waits for a human', async () => {
    const request = { ...jobRequest(), pipeline: 'triage-handovers' };
    // The job's workspace folder is taken by a file: its turn folder cannot be made.
    fs.writeFileSync(path.join(workspace, request.job_id.replace(/[^a-zA-Z0-9_-]/g, '_')), 'in the way');
    const { handle } = await startJob(rail.client, request, rail);
    const view = await waitForStatus(handle, 'escalated');
    expect(view.escalation?.reasons.join(' ')).toMatch(/HandoverFailed: .*could not be created/);
    expect(view.stage).toBe('human');
    expect(await rail.store.listWrites(request.job_id)).toEqual([]);
    await cancelJob(rail.client, request.job_id);
  });
});
