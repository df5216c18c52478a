/**
 * A stage's turn in the job's conversation, over a real (in-memory SQLite) store: the log a turn
 * leaves, what the next stage is handed over its edge, and the refusals before any work.
 */
import { ApplicationFailure } from '@temporalio/common';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  assistantMessage,
  defineStage,
  definePipeline,
  formatTranscript,
  isTranscriptUri,
  TRANSCRIPT_SEPARATOR,
  type EdgeOptions,
  type HandoffV1,
  type StageResult,
} from '../../../contracts';
import { stageActivities, type StageWorkFn } from '../../../activities/stage';
import { transcriptXml } from '../../../activities/handover';
import { logMessages, readLog } from '../../../activities/transcript-log';
import type { TurnPrompt } from '../../../activities/turn';
import { openStore, type Store } from '../../../src/worker/store';
import { firstPackage, ticketRef } from './helpers';
import { ticketEntry } from '../../../contracts/pipelines/ticket-entry';

const stage = <const N extends string>(name: N, accepts: string, output: string) =>
  defineStage({ name, accepts: [accepts], outputs: [output], criteria: ['test'], nominalCostUsd: 0 });
const cards = [stage('ask', 'ticket.raw', 'a.v1'), stage('answer', 'a.v1', 'b.v1'), stage('check', 'b.v1', 'c.v1')];
const pipelineWith = (edges: EdgeOptions[] = []) =>
  definePipeline({
    name: 'turns',
    entry: ticketEntry,
    stages: cards,
    routes: [
      { after: 'ticket.raw', to: 'ask', reason: 'new ticket' },
      { after: 'a.v1', to: 'answer', reason: 'answer it' },
      { after: 'b.v1', to: 'check', reason: 'check it' },
      { after: 'c.v1', complete: 'done' },
    ],
    edges,
    handovers: {
      'last-answer': (log) =>
        log
          .filter((m) => m.message.role === 'assistant')
          .slice(-1)
          .map((m) => m.message),
    },
  });

let store: Store;
beforeEach(async () => {
  store = await openStore({ sqlitePath: ':memory:' });
});
afterEach(async () => {
  await store.close();
});

/** Each stage asks a fixed question under its own system prompt and answers with its name. */
const prompts: Record<string, TurnPrompt> = {};
let ran: string[] = [];
const work =
  (name: string, system = `You are ${name}.`): StageWorkFn =>
  async (_pkg, turn) => {
    ran.push(name);
    prompts[name] = await turn.prompt({ system, question: `What does ${name} say?` });
    turn.reply(assistantMessage(`${name} says hello.`));
    const body = { by: name };
    return {
      artifact: {
        type: `${name === 'ask' ? 'a' : name === 'answer' ? 'b' : 'c'}.v1`,
        uri: `handrail://test/${name}/${ran.length}`,
      },
      body,
      cost_usd: 0,
    };
  };

/** Plays the rail: each stage gets the previous one's package, with the rail's hop and the edge's options. */
async function relay(
  edges: EdgeOptions[],
  names: readonly ('ask' | 'answer' | 'check')[],
  start: HandoffV1 = firstPackage(ticketRef({ id: 't' })),
) {
  const pipeline = pipelineWith(edges);
  const activities = stageActivities(pipeline, store, {
    ask: work('ask'),
    answer: work('answer'),
    check: work('check', 'You are ask.'),
  });
  let pkg = start;
  let from = 'client';
  const results: StageResult[] = [];
  for (const [i, name] of names.entries()) {
    const delivered = {
      ...pkg,
      hop: { from, to: name, reason: `hop ${i}`, count: i + 1, chain: [...(pkg.hop?.chain ?? []), from] },
    };
    const edge = pipeline.edge(from, name);
    const result = await activities[name]({
      stage: name,
      package: delivered,
      delivery_key: `${pkg.job_id}:${name}:${i}`,
      ...(edge ? { edge } : {}),
    });
    results.push(result);
    pkg = result.package;
    from = name;
  }
  return { results, pkg };
}

beforeEach(() => {
  ran = [];
});

describe('the job log', () => {
  it('each turn appends the stage question (as __user__) and its answer; the package carries one transcript ref', async () => {
    const { pkg } = await relay([], ['ask', 'answer']);
    expect(pkg.memory_refs.filter(isTranscriptUri)).toHaveLength(1);
    const log = await readLog(store, pkg, pkg.job_id);
    expect(log.turns.map((t) => t.stage)).toEqual(['ask', 'answer']);
    expect(formatTranscript(logMessages(log))).toBe(
      [
        '[ask:system:text] You are ask.',
        '[__user__] What does ask say?',
        '[ask:assistant:text] ask says hello.',
        '[answer:system:text] You are answer.',
        '[__user__] What does answer say?',
        '[answer:assistant:text] answer says hello.',
      ].join('\n'),
    );
  });

  it('logs a system message only when the identity or the system prompt changes', async () => {
    const pipeline = pipelineWith();
    const same = stageActivities(pipeline, store, { ask: work('ask'), answer: work('ask') });
    const pkg = firstPackage(ticketRef({ id: 't' }));
    const first = await same.ask({ stage: 'ask', package: pkg, delivery_key: 'job_1:ask:1' });
    // `answer` runs as agent `answer` with ask's prompt: the identity changed, so the prompt is logged again.
    const second = await same.answer({
      stage: 'answer',
      package: { ...first.package, hop: { ...pkg.hop!, from: 'ask', to: 'answer', count: 2 } },
      delivery_key: 'job_1:answer:2',
    });
    const roles = logMessages(await readLog(store, second.package, pkg.job_id)).map(
      (m) => `${m.agent_id}:${m.message.role}`,
    );
    expect(roles).toEqual([
      'ask:system',
      '__user__:user',
      'ask:assistant',
      'answer:system',
      '__user__:user',
      'answer:assistant',
    ]);

    const agentPipeline = definePipeline({
      name: 'bots',
      entry: ticketEntry,
      stages: cards.map((c) => ({ ...c, agent: 'bot' })),
      routes: pipeline.routes,
    });
    const bot = stageActivities(agentPipeline, store, {
      ask: work('ask', 'Same prompt.'),
      answer: work('answer', 'Same prompt.'),
    });
    const a = await bot.ask({ stage: 'ask', package: { ...pkg, job_id: 'job_2' }, delivery_key: 'job_2:ask:1' });
    const b = await bot.answer({
      stage: 'answer',
      package: { ...a.package, hop: { ...pkg.hop!, from: 'ask', to: 'answer', count: 2 } },
      delivery_key: 'job_2:answer:2',
    });
    const botRoles = logMessages(await readLog(store, b.package, 'job_2')).map(
      (m) => `${m.agent_id}:${m.message.role}`,
    );
    expect(botRoles).toEqual(['bot:system', '__user__:user', 'bot:assistant', '__user__:user', 'bot:assistant']);
  });

  it("refuses, before any work, a package pointing at another job's log", async () => {
    const { pkg: other } = await relay([], ['ask'], firstPackage(ticketRef({ id: 't' }), { job_id: 'job_other' }));
    const stolen = other.memory_refs.find(isTranscriptUri)!.replace('job_other', 'job_1');
    ran = [];
    const forged = { ...firstPackage(ticketRef({ id: 't' })), memory_refs: [stolen] };
    const error = await relay([], ['ask'], forged).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApplicationFailure);
    expect(error).toMatchObject({
      type: 'ArtifactInvalid',
      message: expect.stringMatching(/was not recorded for this job/),
    });
    expect(ran).toEqual([]);
  });
});

describe('hook results: a decided escalation record re-injected beside the package', () => {
  const hook = {
    event: 'handoff.decided',
    text: 'Handoff record hr_1, taken by ana: decided approve by ana.\nDecision note: credit it',
  };

  /** `ask` ran, then the rail hands `answer` the package with a hook result (the rail's hop after a decision). */
  async function answerWithHook(edges: EdgeOptions[], hooks: unknown = [hook]) {
    const pipeline = pipelineWith(edges);
    const acts = stageActivities(pipeline, store, { ask: work('ask'), answer: work('answer') });
    const first = await acts.ask({
      stage: 'ask',
      package: firstPackage(ticketRef({ id: 't' })),
      delivery_key: 'job_1:ask:1',
    });
    const delivered = {
      ...first.package,
      hop: { from: 'human', to: 'answer', reason: 'approved by ana', count: 2, chain: ['client', 'ask'] },
    };
    const edge = pipeline.edge('ask', 'answer');
    return acts.answer({
      stage: 'answer',
      package: delivered,
      delivery_key: 'job_1:answer:2',
      ...(edge ? { edge } : {}),
      hook_results: hooks as (typeof hook)[],
    });
  }

  it('over an edge without a handover the stage gets it as its one history message; its turn logs it as the human’s, marked hook_result', async () => {
    const result = await answerWithHook([]);
    expect(prompts.answer!.history).toEqual([assistantMessage(hook.text)]);
    expect(prompts.answer!.messages).toEqual([
      { role: 'system', content: 'You are answer.' },
      { role: 'assistant', content: hook.text },
      { role: 'user', content: 'What does answer say?' },
    ]);
    const log = await readLog(store, result.package, result.package.job_id);
    expect(log.turns.map((t) => t.stage)).toEqual(['ask', 'answer']);
    expect(log.turns[1]!.messages.map((m) => [m.agent_id, m.message.role, m.origin?.kind ?? '-'])).toEqual([
      ['human', 'assistant', 'hook_result'],
      ['answer', 'system', '-'],
      ['__user__', 'user', '-'],
      ['answer', 'assistant', '-'],
    ]);
  });

  it('with a transcript handover it comes right before the question that carries the log; transcripts show it as a hook result, neither the user’s nor an agent’s', async () => {
    const result = await answerWithHook([{ from: 'ask', to: 'answer', handover: 'transcript_prepend' }]);
    expect(prompts.answer!.history).toEqual([assistantMessage(hook.text)]);
    expect(prompts.answer!.messages.map((m) => m.role)).toEqual(['system', 'assistant', 'user']);
    expect(prompts.answer!.messages[2]!.content).toContain('[ask:assistant:text] ask says hello.');
    const messages = logMessages(await readLog(store, result.package, result.package.job_id));
    const transcript = formatTranscript(messages);
    expect(transcript).toContain('[human:hook_result:text] Handoff record hr_1, taken by ana: decided approve by ana.');
    expect(transcript).not.toContain('[__user__] Handoff record');
    // The XML of a trace or `handrail transcript --format xml`: a turn of its own, not folded
    // into the previous agent's answer.
    const xml = transcriptXml(messages);
    expect(xml).toContain(
      '<turn number="2">\n  <hook_result event="handoff.decided">\n    Handoff record hr_1, taken by ana: decided approve by ana.\n    Decision note: credit it\n  </hook_result>\n</turn>',
    );
    expect(xml.split('<assistant agent="ask">')[1]!.split('</assistant>')[0]).not.toContain('Handoff record');
  });

  it('hook results that are not the rail’s shape are refused before any work', async () => {
    const error = await answerWithHook([], [{ event: '', text: 'x' }]).catch((e: unknown) => e);
    expect(error).toMatchObject({ type: 'StageInputInvalid', message: expect.stringMatching(/hook_results must be/) });
    expect(ran).toEqual(['ask']);
  });
});

describe('the handover a stage gets over its edge', () => {
  it('no handover: only the package (no history, the question as asked)', async () => {
    await relay([], ['ask', 'answer']);
    expect(prompts.answer).toMatchObject({ questionText: 'What does answer say?', history: [], handover: undefined });
    expect(prompts.answer!.messages).toEqual([
      { role: 'system', content: 'You are answer.' },
      { role: 'user', content: 'What does answer say?' },
    ]);
  });

  it('transcript_prepend: the log so far, the separator, then the question; recorded on the result and in the log', async () => {
    const { results, pkg } = await relay(
      [{ from: 'ask', to: 'answer', handover: 'transcript_prepend' }],
      ['ask', 'answer'],
    );
    const log = await readLog(store, pkg, pkg.job_id);
    const before = formatTranscript(log.turns[0]!.messages);
    expect(prompts.answer!.questionText).toBe(`${before}${TRANSCRIPT_SEPARATOR}What does answer say?`);
    expect(prompts.answer!.messages.at(-1)).toEqual({ role: 'user', content: prompts.answer!.questionText });
    expect(results[1]!.handover).toMatchObject({ used: 'transcript_prepend', tokens: expect.any(Number) });
    expect(log.turns[1]!.handover).toMatchObject({
      used: 'transcript_prepend',
      question_text: prompts.answer!.questionText,
    });
    // The log keeps the stage's own question, not the transcript it was handed.
    expect(log.turns[1]!.messages.find((m) => m.agent_id === '__user__')!.message.content).toEqual([
      { type: 'text', text: 'What does answer say?' },
    ]);
  });

  it('a callable: its history before the question, the question unchanged', async () => {
    await relay([{ from: 'answer', to: 'check', handover: { callable: 'last-answer' } }], ['ask', 'answer', 'check']);
    expect(prompts.check!.history).toEqual([assistantMessage('answer says hello.')]);
    expect(prompts.check!.messages).toEqual([
      { role: 'system', content: 'You are ask.' },
      { role: 'assistant', content: 'answer says hello.' },
      { role: 'user', content: 'What does check say?' },
    ]);
  });

  it('over the cap with no fallback: ContextBudgetExceeded, and no result is recorded', async () => {
    const error = await relay(
      [{ from: 'ask', to: 'answer', handover: 'transcript_prepend', maxTokens: 5 }],
      ['ask', 'answer'],
    ).catch((e: unknown) => e);
    expect(error).toMatchObject({
      type: 'ContextBudgetExceeded',
      nonRetryable: true,
      message: expect.stringMatching(/over the edge's cap of 5/),
    });
    expect(await store.findStageRecord('job_1:answer:1')).toBeNull();
  });

  it('edge options the stage cannot honour (unknown strategy, callable not registered) fail before the work', async () => {
    for (const handover of ['transcript_summarize', { callable: 'nowhere' }] as const) {
      ran = [];
      const pipeline = pipelineWith();
      const activities = stageActivities(pipeline, store, { answer: work('answer') });
      const start = firstPackage(ticketRef({ id: 't' }));
      const pkg = {
        ...start,
        artifacts: [...start.artifacts, { type: 'a.v1', uri: 'handrail://test/a' }],
        hop: { from: 'ask', to: 'answer', reason: 'x', count: 2, chain: ['client', 'ask'] },
      };
      const error = await activities
        .answer({
          stage: 'answer',
          package: pkg,
          delivery_key: `job_1:answer:${JSON.stringify(handover)}`,
          edge: { from: 'ask', to: 'answer', handover: handover as EdgeOptions['handover'] },
        })
        .catch((e: unknown) => e);
      expect(error).toMatchObject({
        type: 'HandoverFailed',
        message: expect.stringMatching(/unknown handover strategy|not registered/),
      });
      expect(ran).toEqual([]);
    }
  });

  it('a stage that never asks for its prompt takes no handover (nothing to cap): its turn logs the hop reason', async () => {
    const silent: StageWorkFn = async () => {
      ran.push('silent');
      return { artifact: { type: 'b.v1', uri: 'handrail://test/silent' }, body: { quiet: true }, cost_usd: 0 };
    };
    const pipeline = pipelineWith([{ from: 'ask', to: 'answer', handover: 'transcript_prepend', maxTokens: 1 }]);
    const activities = stageActivities(pipeline, store, { ask: work('ask'), answer: silent });
    const first = await activities.ask({
      stage: 'ask',
      package: firstPackage(ticketRef({ id: 't' })),
      delivery_key: 'job_1:ask:0',
    });
    const delivered = {
      ...first.package,
      hop: { from: 'ask', to: 'answer', reason: 'answer it', count: 2, chain: ['client', 'ask', 'answer'] },
    };
    const result = await activities.answer({
      stage: 'answer',
      package: delivered,
      delivery_key: 'job_1:answer:1',
      edge: pipeline.edge('ask', 'answer')!,
    });
    expect(result.handover).toBeUndefined();
    const turns = (await readLog(store, result.package, 'job_1')).turns;
    expect(formatTranscript(turns[1]!.messages)).toBe(
      '[__user__] answer it\n[answer:assistant:text] b.v1: {"quiet":true}',
    );
  });

  it('refuses, before any work, a package whose memory_refs leave no room for the transcript', async () => {
    const full = {
      ...firstPackage(ticketRef({ id: 't' })),
      memory_refs: Array.from({ length: 64 }, (_, i) => `note:${i}`),
    };
    const error = await relay([], ['ask'], full).catch((e: unknown) => e);
    expect(error).toMatchObject({
      type: 'StageInputInvalid',
      message: expect.stringMatching(/memory_refs holds 64 refs/),
    });
    expect(ran).toEqual([]);
  });

  it('one prompt per turn: asking again with another question throws', async () => {
    const twice: StageWorkFn = async (_pkg, turn) => {
      await turn.prompt({ question: 'first' });
      await turn.prompt({ question: 'second' });
      return { artifact: { type: 'a.v1', uri: 'handrail://test/twice' }, body: {}, cost_usd: 0 };
    };
    const activities = stageActivities(pipelineWith(), store, { ask: twice });
    await expect(
      activities.ask({ stage: 'ask', package: firstPackage(ticketRef({ id: 't' })), delivery_key: 'job_1:ask:0' }),
    ).rejects.toThrow(/asked twice with different prompts/);
  });
});
