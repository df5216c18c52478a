/**
 * A job's conversation as an operator reads it (`handrail transcript`): the tagged message log
 * its package references, read from the store the worker writes, and pure renderers of it.
 */
import type { Client } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import {
  formatTranscript,
  isTranscriptUri,
  messageText,
  USER_AGENT_ID,
  type Message,
  type TaggedMessage,
} from '../../contracts';
import { transcriptXml } from '../../activities/handover';
import { logMessages, readLog, type HandoverRecord, type TurnRecord } from '../../activities/transcript-log';
import type { Store } from '../worker/store';
import { getJob } from './client';

export type TranscriptFormat = 'text' | 'xml';

export interface JobTranscript {
  job_id: string;
  /** The log's URI in the package's `memory_refs`; undefined before the job's first stage turn. */
  uri: string | undefined;
  /** Oldest first. */
  turns: TurnRecord[];
}

/** The log the package references is not one the rail wrote, or not in this store. */
export class TranscriptUnreadableError extends Error {
  override readonly name = 'TranscriptUnreadableError';
}

/** `--stage` named a stage that took no turn in this job. */
export class StageNotInTranscriptError extends Error {
  override readonly name = 'StageNotInTranscriptError';
  constructor(
    readonly jobId: string,
    readonly stage: string,
    readonly stages: string[],
  ) {
    super(`stage "${stage}" has no turn in the transcript of ${jobId}; stages with turns: ${stages.join(', ')}`);
  }
}

/** The job's log, verified turn by turn as a stage would read it (JobNotFoundError for an unknown job). */
export async function jobTranscript(client: Client, store: Store, jobId: string): Promise<JobTranscript> {
  const { package: pkg } = await getJob(client, jobId);
  const uri = pkg.memory_refs.find(isTranscriptUri);
  if (uri === undefined) return { job_id: jobId, uri, turns: [] };
  try {
    // Jobs the CLI reads are rail jobs: their log is scoped by the plain job id.
    return { job_id: jobId, uri, turns: (await readLog(store, pkg, jobId)).turns };
  } catch (err) {
    if (!(err instanceof ApplicationFailure)) throw err;
    // A turn missing from the store most often means another store than the worker's.
    throw new TranscriptUnreadableError(
      `${err.message} (read from the ${store.backend} store; the worker must use the same HANDRAIL_DATA_DIR or DATABASE_URL)`,
    );
  }
}

/** What a stage was handed at one of its turns. */
export interface HandedTurn {
  turn: number;
  /** null: the edge has no handover and the stage got the package only. */
  handover: { used: string; tokens: number; fell_back?: boolean } | null;
  question_text: string;
  history: Message[];
}

/** Every turn `stage` took, oldest first, with what it was handed. */
export function handedTurns(transcript: JobTranscript, stage: string): HandedTurn[] {
  const turns = transcript.turns.filter((t) => t.stage === stage);
  if (turns.length === 0)
    throw new StageNotInTranscriptError(transcript.job_id, stage, [...new Set(transcript.turns.map((t) => t.stage))]);
  return turns.map((t) => {
    if (!t.handover) return { turn: t.turn, handover: null, question_text: ownQuestion(t), history: [] };
    return {
      turn: t.turn,
      handover: summary(t.handover),
      question_text: t.handover.question_text,
      history: t.handover.history,
    };
  });
}

const summary = (h: HandoverRecord) => ({
  used: h.used,
  tokens: h.tokens,
  ...(h.fell_back ? { fell_back: true } : {}),
});

/** Without a handover the stage was asked its own question: the turn's `__user__` message. */
const ownQuestion = (turn: TurnRecord) =>
  turn.messages
    .filter((m) => m.agent_id === USER_AGENT_ID)
    .map((m) => messageText(m.message))
    .join('\n');

const render = (log: readonly TaggedMessage[], format: TranscriptFormat) =>
  format === 'xml' ? transcriptXml(log).trimEnd() : formatTranscript(log);
const plural = (n: number, what: string) => `${n} ${what}${n === 1 ? '' : 's'}`;

/** What `handrail transcript` prints: the whole log, or what one stage was handed at each of its turns. */
export function transcriptOutput(
  transcript: JobTranscript,
  options: { stage?: string; format: TranscriptFormat; json: boolean },
): string {
  const { stage, format, json } = options;
  if (transcript.uri === undefined) {
    return json
      ? stringify({ job_id: transcript.job_id, ...(stage ? { stage } : { transcript: null }), turns: [] })
      : `job ${transcript.job_id} has no transcript yet`;
  }
  if (stage) {
    const turns = handedTurns(transcript, stage);
    return json ? stringify({ job_id: transcript.job_id, stage, turns }) : handedTurnsText(stage, turns, format);
  }
  return json ? stringify(transcriptJson(transcript)) : transcriptText(transcript, format);
}

const stringify = (value: unknown) => JSON.stringify(value, null, 2);

/** The whole log under a one-line header. */
function transcriptText(transcript: JobTranscript, format: TranscriptFormat): string {
  const header = `transcript of ${transcript.job_id}: ${plural(transcript.turns.length, 'turn')}, ${transcript.uri}`;
  return `${header}\n${render(logMessages(transcript), format)}`;
}

function transcriptJson(transcript: JobTranscript) {
  return {
    job_id: transcript.job_id,
    transcript: transcript.uri,
    turns: transcript.turns.map((t) => ({
      stage: t.stage,
      turn: t.turn,
      agent_id: t.agent_id,
      ...(t.handover ? { handover: summary(t.handover) } : {}),
      messages: t.messages,
    })),
  };
}

/** One block per turn: a heading, the question as handed over, then the handed-over history. */
function handedTurnsText(stage: string, turns: readonly HandedTurn[], format: TranscriptFormat): string {
  return turns
    .map((t) => {
      const how = t.handover
        ? `${t.handover.used} · ${plural(t.handover.tokens, 'token')}${t.handover.fell_back ? ' · fell back' : ''}`
        : 'package only (no handover on this edge)';
      const history =
        t.history.length > 0
          ? [
              'history:',
              render(
                t.history.map((message) => ({ message, agent_id: 'history' })),
                format,
              ),
            ]
          : [];
      return [`hop ${t.turn} · ${stage} · ${how}`, t.question_text, ...history].join('\n');
    })
    .join('\n\n');
}
