// The conversation bench's stage work: `talk` replies with a deterministic conversation of the
// size its ticket names (in the store, never in history); `read` is handed it and replies small.
import { z } from 'zod';
import { assistantMessage, messageText, toolCall, toolResult, type Message } from '../../contracts';
import { TicketRaw } from '../../contracts/pipelines/ticket-artifacts';
import { readArtifactBody, requireArtifact, writeArtifact } from '../../activities/artifacts';
import { turnOptions, type ActivityDeps } from '../../activities/deps';
import { stageFailure } from '../../activities/failures';
import { stageActivities } from '../../activities/stage';
import { conversationBench, READ, TALK } from './pipeline';

/** The ticket names the size in seven digits, so both sizes put text of one length in history. */
export const sizeLine = (bytes: number) => `conversation bytes: ${String(bytes).padStart(7, '0')}`;
const SIZE_LINE = /conversation bytes: (\d{7})/;

const TalkV1 = z.object({ bytes: z.string().regex(/^\d{7}$/), messages: z.int() });
const ReadV1 = z.object({ messages: z.int(), handover: z.string() });

const textBytes = (m: Message) => Buffer.byteLength(messageText(m));

/** `n` bytes of ASCII lines, the same for the same label and size. */
function filler(label: string, n: number): string {
  const lines: string[] = [];
  for (let i = 0, len = 0; len < n; i++) {
    const line = `${label} line ${String(i).padStart(6, '0')}: this stays in the job's log, never in workflow history.\n`;
    lines.push(line);
    len += line.length;
  }
  return lines.join('').slice(0, n);
}

/** Two tool calls with their results and an answer, whose texts total exactly `bytes`. */
export function conversation(bytes: number): Message[] {
  const calls = [
    toolCall('notes.search', { query: 'duplicate charge', limit: 3 }, 'call_1'),
    toolCall('notes.fetch', { id: 'note_7' }, 'call_2'),
  ];
  const rest = bytes - calls.reduce((n, m) => n + textBytes(m), 0);
  if (rest < 3) throw stageFailure('StageInputInvalid', `talk: ${bytes} bytes is too small for a conversation`);
  const part = Math.floor(rest / 3);
  return [
    calls[0]!,
    toolResult(filler('search result', part), 'call_1'),
    calls[1]!,
    toolResult(filler('note', part), 'call_2'),
    assistantMessage(filler('answer', rest - 2 * part)),
  ];
}

export function conversationActivities(deps: ActivityDeps) {
  const { store } = deps;
  return stageActivities(
    conversationBench,
    store,
    {
      talk: async (pkg, turn) => {
        const ticket = await readArtifactBody(store, requireArtifact(pkg, 'talk', 'ticket.raw'), TicketRaw);
        const size = SIZE_LINE.exec(ticket.body)?.[1];
        if (size === undefined)
          throw stageFailure(
            'StageInputInvalid',
            'talk: the ticket body names no size ("conversation bytes: NNNNNNN")',
          );
        await turn.prompt({ question: ticket.subject });
        const messages = conversation(Number(size));
        turn.reply(...messages);
        const body = { bytes: size, messages: messages.length };
        return { artifact: await writeArtifact(store, TALK, TalkV1, body), body, cost_usd: 0 };
      },
      read: async (_pkg, turn) => {
        const prompt = await turn.prompt({ question: 'How many messages does the conversation hold?' });
        const said = (await turn.conversation()).length;
        turn.reply(assistantMessage(`${said} messages`));
        const body = { messages: said, handover: prompt.handover ?? 'none' };
        return { artifact: await writeArtifact(store, READ, ReadV1, body), body, cost_usd: 0 };
      },
    },
    turnOptions(deps),
  );
}
