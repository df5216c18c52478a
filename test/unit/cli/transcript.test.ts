import { describe, expect, it } from 'vitest';
import {
  assistantMessage,
  systemMessage,
  TRANSCRIPT_SEPARATOR,
  USER_AGENT_ID,
  userMessage,
  type TaggedMessage,
} from '../../../contracts';
import type { TurnRecord } from '../../../activities/transcript-log';
import { StageNotInTranscriptError, transcriptOutput, type JobTranscript } from '../../../src/operator/transcript';

const uri = `handrail://transcripts/j1/${'a'.repeat(64)}`;
const user = (text: string): TaggedMessage => ({ message: userMessage(text), agent_id: USER_AGENT_ID });
const said = (agent: string, text: string): TaggedMessage => ({ message: assistantMessage(text), agent_id: agent });
const turn = (t: Partial<TurnRecord> & Pick<TurnRecord, 'stage' | 'turn' | 'messages'>): TurnRecord => ({
  job_id: 'j1',
  prev: null,
  agent_id: t.stage,
  system_sha: null,
  ...t,
});

const classify = turn({
  stage: 'classify',
  turn: 0,
  messages: [
    { message: systemMessage('You classify tickets.'), agent_id: 'classify' },
    user('My app logs me out'),
    said('classify', 'sentiment 0.1'),
  ],
});
const classifyLog =
  '[classify:system:text] You classify tickets.\n[__user__] My app logs me out\n[classify:assistant:text] sentiment 0.1';
const escalation = turn({
  stage: 'escalation',
  turn: 1,
  handover: {
    used: 'transcript_prepend',
    question_text: `${classifyLog}${TRANSCRIPT_SEPARATOR}Write the note`,
    history: [],
    tokens: 42,
  },
  messages: [user('Write the note'), said('escalation', 'note')],
});
const draft = (n: number, handover?: TurnRecord['handover']) =>
  turn({
    stage: 'draft',
    turn: n,
    ...(handover ? { handover } : {}),
    messages: [user(`draft #${n}`), said('draft', 'text')],
  });
const job = (...turns: TurnRecord[]): JobTranscript => ({ job_id: 'j1', uri, turns });
const text = { format: 'text', json: false } as const;

describe('handrail transcript output', () => {
  it('the whole log: a header, then the transcript of every message', () => {
    expect(transcriptOutput(job(classify, escalation), text)).toBe(
      `transcript of j1: 2 turns, ${uri}\n${classifyLog}\n[__user__] Write the note\n[escalation:assistant:text] note`,
    );
    expect(transcriptOutput(job(classify), text).split('\n')[0]).toBe(`transcript of j1: 1 turn, ${uri}`);
  });

  it('--format xml renders the log as a trace file’s turns, after the same header', () => {
    const xml = transcriptOutput(job(classify, escalation), { format: 'xml', json: false });
    expect(xml).toMatch(/^transcript of j1: 2 turns, /);
    expect(xml).toContain(
      '<turn number="1">\n  <system_prompt agent="classify">\n    You classify tickets.\n  </system_prompt>\n  <user>\n    My app logs me out',
    );
    expect(xml).toContain('<turn number="2">');
    expect(xml.endsWith('</turn>')).toBe(true);
  });

  it('--json: each turn with its stage, hop, agent, handover summary and messages; no header', () => {
    const parsed = JSON.parse(transcriptOutput(job(classify, escalation), { format: 'text', json: true }));
    expect(parsed).toEqual({
      job_id: 'j1',
      transcript: uri,
      turns: [
        { stage: 'classify', turn: 0, agent_id: 'classify', messages: classify.messages },
        {
          stage: 'escalation',
          turn: 1,
          agent_id: 'escalation',
          handover: { used: 'transcript_prepend', tokens: 42 },
          messages: escalation.messages,
        },
      ],
    });
  });

  it('--stage: what the stage was handed, the question as the handover made it', () => {
    expect(transcriptOutput(job(classify, escalation), { ...text, stage: 'escalation' })).toBe(
      `hop 1 · escalation · transcript_prepend · 42 tokens\n${classifyLog}${TRANSCRIPT_SEPARATOR}Write the note`,
    );
  });

  it('--stage on a stage run several times: one block per turn; a package-only turn shows its own question; history and fall-backs are named', () => {
    const history = [userMessage('earlier question'), assistantMessage('earlier answer')];
    const log = job(
      classify,
      draft(2),
      draft(4, { used: 'history', question_text: 'draft #4', history, tokens: 1 }),
      draft(6, {
        used: 'transcript_materialize',
        question_text: 'read the trace',
        history: [],
        tokens: 9,
        fell_back: true,
      }),
    );
    expect(transcriptOutput(log, { ...text, stage: 'draft' })).toBe(
      [
        'hop 2 · draft · package only (no handover on this edge)\ndraft #2',
        'hop 4 · draft · history · 1 token\ndraft #4\nhistory:\n[history:user:text] earlier question\n[history:assistant:text] earlier answer',
        'hop 6 · draft · transcript_materialize · 9 tokens · fell back\nread the trace',
      ].join('\n\n'),
    );
    const xml = transcriptOutput(log, { format: 'xml', json: false, stage: 'draft' });
    expect(xml).toContain(
      'draft #4\nhistory:\n<turn number="1">\n  <user>\n    earlier question\n  </user>\n  <assistant agent="history">',
    );

    expect(JSON.parse(transcriptOutput(log, { format: 'text', json: true, stage: 'draft' }))).toEqual({
      job_id: 'j1',
      stage: 'draft',
      turns: [
        { turn: 2, handover: null, question_text: 'draft #2', history: [] },
        { turn: 4, handover: { used: 'history', tokens: 1 }, question_text: 'draft #4', history },
        {
          turn: 6,
          handover: { used: 'transcript_materialize', tokens: 9, fell_back: true },
          question_text: 'read the trace',
          history: [],
        },
      ],
    });
  });

  it('--stage naming a stage without turns is refused with the stages that have some', () => {
    const log = job(classify, draft(2), draft(4), escalation);
    expect(() => transcriptOutput(log, { ...text, stage: 'review' })).toThrow(StageNotInTranscriptError);
    expect(() => transcriptOutput(log, { ...text, stage: 'review' })).toThrow(
      'stage "review" has no turn in the transcript of j1; stages with turns: classify, draft, escalation',
    );
  });

  it('a job without a transcript yet says so, in text and in JSON, with or without --stage', () => {
    const none: JobTranscript = { job_id: 'j1', uri: undefined, turns: [] };
    expect(transcriptOutput(none, text)).toBe('job j1 has no transcript yet');
    expect(transcriptOutput(none, { ...text, stage: 'draft' })).toBe('job j1 has no transcript yet');
    expect(JSON.parse(transcriptOutput(none, { format: 'text', json: true }))).toEqual({
      job_id: 'j1',
      transcript: null,
      turns: [],
    });
    expect(JSON.parse(transcriptOutput(none, { format: 'text', json: true, stage: 'draft' }))).toEqual({
      job_id: 'j1',
      stage: 'draft',
      turns: [],
    });
  });
});
