/**
 * The built-in scorers on recorded jobs: each history decoded as `handrail eval` decodes it, and
 * the scores its recording implies (the revise loop, the hop cap, a routed support ticket).
 */
import { describe, expect, it } from 'vitest';
import { BUILT_IN_PIPELINES } from '../../../contracts/pipelines';
import { historyFile } from '../../../scripts/replay/histories';
import { historyFileSource } from '../../../src/replay';
import { evalJobFromHistory } from '../../../src/eval/job';
import { BUILT_IN_SCORERS, ScorerError, scoreJob, writeMatches } from '../../../src/eval/scorers';
import type { EvalJob, Expectation, Scorer } from '../../../src/eval/types';

function recorded(name: string, expect?: Expectation): EvalJob {
  const source = historyFileSource(historyFile(name));
  const job = evalJobFromHistory(source.workflowId, source.history, BUILT_IN_PIPELINES, {
    case: name,
    source: 'recorded',
    ...(expect ? { expect } : {}),
  });
  if (!job) throw new Error(`${name} is not a handoffJob history`);
  return job;
}

describe('built-in scorers on recorded jobs', () => {
  it('happy path: completed, one passing verdict, no revision, four hops (transfers), what it spent, written', async () => {
    const job = recorded('happy-path');
    expect(job.path).toEqual(['intake', 'retrieve', 'draft', 'judge', 'writeback']);
    const scores = await scoreJob(job, BUILT_IN_SCORERS);
    expect(scores).toMatchObject({
      completed: 1,
      escalated: 0,
      rejected: 0,
      pass_rate: 1,
      final_pass: 1,
      revisions_used: 0,
      hops: 4,
      cost_per_job: job.result!.spent_usd,
      no_progress: 0,
      cycle: 0,
      written: 1,
    });
    expect(scores.latency_ms).toBeGreaterThan(0);
    // Nothing expected, nothing replayed: those scorers do not apply.
    expect(scores).not.toHaveProperty('write_expected');
    expect(scores).not.toHaveProperty('replay_moved');
  });

  it('revise then pass: half the verdicts passed, one revision used, the written note is the revised draft', async () => {
    const job = recorded('revise-then-pass');
    expect(job.verdicts).toEqual(['fail', 'pass']);
    const scores = await scoreJob(job, BUILT_IN_SCORERS);
    expect(scores).toMatchObject({ pass_rate: 0.5, final_pass: 1, revisions_used: 1, hops: 6, completed: 1 });
    const drafts = job.artifacts.filter((a) => a.type === 'summary_md');
    expect(job.written).toEqual(drafts.at(-1)!.body);
  });

  it('per-call approval: a call asked about, approved or denied, and how long it waited', async () => {
    for (const [name, verdict] of [
      ['tool-call-approved', 'approve'],
      ['tool-call-denied', 'deny'],
    ] as const) {
      const job = recorded(name);
      const scores = await scoreJob(job, BUILT_IN_SCORERS);
      expect(scores).toMatchObject({
        approvals_asked: 1,
        approvals_approved: verdict === 'approve' ? 1 : 0,
        approvals_denied: verdict === 'deny' ? 1 : 0,
        completed: 1,
      });
      const [asked, word] = job.acks.filter((a) => a.tool_call);
      expect(scores.approval_wait_ms).toBe(Date.parse(word!.at) - Date.parse(asked!.at));
    }
    const none = await scoreJob(recorded('happy-path'), BUILT_IN_SCORERS);
    expect(none).toMatchObject({ approvals_asked: 0, approvals_approved: 0, approvals_denied: 0 });
    expect(none).not.toHaveProperty('approval_wait_ms');
  });

  it('the hop cap: rejected by the human, nothing written', async () => {
    const scores = await scoreJob(recorded('hop-cap'), BUILT_IN_SCORERS);
    expect(scores).toMatchObject({ rejected: 1, completed: 0, written: 0 });
  });

  it("a support ticket: the critic is the pipeline's (review), and its handover's tokens are counted", async () => {
    const job = recorded('support-routing-handover');
    expect(job.path).toEqual(['classify', 'escalation', 'review', 'crm-note']);
    expect(job.verdicts).toEqual(['pass']);
    const scores = await scoreJob(job, BUILT_IN_SCORERS);
    expect(scores.tokens).toBe(job.artifacts.find((a) => a.stage === 'escalation')!.tokens);
    expect(scores.tokens).toBeGreaterThan(0);
  });

  it('expectations: status, visits and the written content, each scored only when declared', async () => {
    const job = recorded('happy-path', {
      status: 'completed',
      visits: ['judge', 'writeback'],
      write: { contains: ['refund'], absent: ['we will refund you'] },
    });
    expect(await scoreJob(job, BUILT_IN_SCORERS)).toMatchObject({
      status_expected: 1,
      route_expected: 1,
      write_expected: 1,
    });
    expect(writeMatches({ ...job, expect: { write: { contains: ['no such phrase anywhere'] } } })).toBe(0);
    expect(writeMatches({ ...job, expect: { write: { matches: '^#+ ' } } })).toBe(1);
    // An expected write that never happened does not match.
    expect(writeMatches({ ...recorded('hop-cap'), expect: { write: { contains: [] } } })).toBe(0);
  });

  it('a stageHop history is no job to score', () => {
    const source = historyFileSource(historyFile('duplicate-delivery'));
    expect(
      evalJobFromHistory(source.workflowId, source.history, BUILT_IN_PIPELINES, { case: 'x', source: 'recorded' }),
    ).toBeUndefined();
  });

  it("a user's scorer that throws, or returns no number, is named with the job", async () => {
    const job = recorded('happy-path');
    const throws: Scorer = {
      name: 'mine',
      description: '',
      unit: 'score',
      score: () => {
        throw new Error('boom');
      },
    };
    await expect(scoreJob(job, [throws])).rejects.toThrow(new ScorerError('mine', job.job_id, 'boom').message);
    const nan: Scorer = { name: 'nan', description: '', unit: 'score', score: () => NaN };
    await expect(scoreJob(job, [nan])).rejects.toBeInstanceOf(ScorerError);
  });
});
