/**
 * The job's conversation, tagged: every message with the agent that produced it.
 * Pure (workflow code imports the strategy names); the log itself lives in the store and is
 * rendered by activities — it never travels in Temporal history.
 */
import { z } from 'zod';

/** The agent id of prompts the rail or the job's entry supplied. */
export const USER_AGENT_ID = '__user__';

/** Fences a rendered transcript inside a question prompt. */
export const TRANSCRIPT_SEPARATOR = '\n\n---\n\n';

export const Role = z.enum(['system', 'user', 'assistant', 'tool']);
export type Role = z.infer<typeof Role>;

export const ContentBlock = z.discriminatedUnion('type', [
  z.object({ type: z.literal('text'), text: z.string() }),
  /** Reasoning: kept in the log, never rendered into a transcript, so it never crosses a hop. */
  z.object({ type: z.literal('thinking'), thinking: z.string() }),
  z.object({
    type: z.literal('tool_use'),
    id: z.string().optional(),
    name: z.string().min(1),
    input: z.record(z.string(), z.unknown()),
  }),
  z.object({ type: z.literal('tool_result'), tool_use_id: z.string().optional(), content: z.string() }),
]);
export type ContentBlock = z.infer<typeof ContentBlock>;

export const Message = z.object({ role: Role, content: z.array(ContentBlock) });
export type Message = z.infer<typeof Message>;

/** Where a message came from when it is neither a prompt nor an agent's own turn: a
 * `hook_result`, e.g. an escalation record's delta re-injected after a human decided. Context for the
 * next stage; never the user's input. */
export const MessageOrigin = z.object({ kind: z.literal('hook_result'), event: z.string().min(1) });
export type MessageOrigin = z.infer<typeof MessageOrigin>;

export const TaggedMessage = z.object({
  message: Message,
  agent_id: z.string().min(1),
  origin: MessageOrigin.optional(),
});
export type TaggedMessage = z.infer<typeof TaggedMessage>;

const textMessage =
  (role: Role) =>
  (text: string): Message => ({ role, content: [{ type: 'text', text }] });
export const systemMessage = textMessage('system');
export const userMessage = textMessage('user');
export const assistantMessage = textMessage('assistant');
export const toolCall = (name: string, input: Record<string, unknown>, id?: string): Message => ({
  role: 'assistant',
  content: [{ type: 'tool_use', name, input, ...(id === undefined ? {} : { id }) }],
});
export const toolResult = (content: string, toolUseId?: string): Message => ({
  role: 'tool',
  content: [{ type: 'tool_result', content, ...(toolUseId === undefined ? {} : { tool_use_id: toolUseId }) }],
});

/** A block as a transcript line shows it (text, `name(arg=value)`, the tool's result); thinking has none. */
export const blockText = (b: ContentBlock): string | undefined =>
  b.type === 'text'
    ? b.text
    : b.type === 'tool_use'
      ? renderToolCall(b.name, b.input)
      : b.type === 'tool_result'
        ? b.content
        : undefined;

/** A message's blocks as text, one per line (what a chat endpoint takes as `content`); thinking dropped. */
export const messageText = (message: Message): string => message.content.flatMap((b) => blockText(b) ?? []).join('\n');

/**
 * The transcript: one line per non-thinking block, `[__user__] text` for prompts,
 * `[agent_id:role:content_type] text` for agent messages and `[agent_id:hook_result:text]` for
 * hook results; tool calls as `name(arg=value)`, tool
 * results as their string. Thinking blocks are dropped so reasoning never crosses a hop.
 */
export function formatTranscript(log: readonly TaggedMessage[]): string {
  const lines: string[] = [];
  for (const { message, agent_id, origin } of log) {
    for (const block of message.content) {
      const body = blockText(block);
      if (body === undefined) continue;
      // A hook result names its origin where an agent's message names its role.
      const label =
        agent_id === USER_AGENT_ID
          ? `[${USER_AGENT_ID}]`
          : `[${agent_id}:${origin?.kind ?? message.role}:${block.type}]`;
      lines.push(`${label} ${body}`);
    }
  }
  return lines.join('\n');
}

/** `name(k=v, …)` with each value as Python's repr would show it (`{v!r}`), so transcripts match across languages. */
export function renderToolCall(name: string, input: Record<string, unknown>): string {
  return `${name}(${renderToolArgs(input)})`;
}

/** A tool call's `k=v, …` (what a trace file's `<tool_call>` holds), in the stored log's order. */
export function renderToolArgs(input: Record<string, unknown>): string {
  return storedEntries(input)
    .map(([k, v]) => `${k}=${pyRepr(v)}`)
    .join(', ');
}

/**
 * An object's entries in the order the stored log (canonical JSON) holds them, whatever order the
 * object has in memory: keys sorted, then written by JSON.stringify, which puts integer-like keys
 * first, ascending (`2`, `10`, `a`, `b`). `undefined` values are gone, as JSON has none.
 */
const storedEntries = (value: object): [string, unknown][] =>
  Object.keys(
    Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, true]),
    ),
  ).flatMap((k) => {
    const v = (value as Record<string, unknown>)[k];
    return v === undefined ? [] : [[k, v]];
  });

function pyRepr(value: unknown): string {
  if (typeof value === 'string') return pyString(value);
  if (value === null || value === undefined) return 'None';
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  if (typeof value === 'number') return pyNumber(value);
  if (Array.isArray(value)) return `[${value.map(pyRepr).join(', ')}]`;
  if (typeof value === 'object')
    return `{${storedEntries(value)
      .map(([k, v]) => `${pyString(k)}: ${pyRepr(v)}`)
      .join(', ')}}`;
  return pyString(String(value));
}

/**
 * A number as Python shows what JSON makes of it: an integral value is written without a point
 * and read back as an int (`3`); any other is a float, in repr's shortest digits, with an exponent
 * below 1e-4 or from 1e16 (`2.5e-05`, `0.0001`, `1e+21`).
 */
function pyNumber(n: number): string {
  if (!Number.isFinite(n)) return Number.isNaN(n) ? 'nan' : n > 0 ? 'inf' : '-inf';
  // JSON's digits, not the exact binary value: 2^53 + 1 and beyond are stored as shortest digits.
  if (Number.isInteger(n) && Math.abs(n) < 1e21) return String(n);
  const [mantissa = '', exponent = '0'] = Math.abs(n).toExponential().split('e');
  const digits = mantissa.replace('.', '');
  const e = Number(exponent);
  const sign = n < 0 ? '-' : '';
  if (e < -4 || e >= 16) {
    const m = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
    return `${sign}${m}e${e < 0 ? '-' : '+'}${String(Math.abs(e)).padStart(2, '0')}`;
  }
  if (e < 0) return `${sign}0.${'0'.repeat(-e - 1)}${digits}`;
  return `${sign}${digits.slice(0, e + 1).padEnd(e + 1, '0')}.${digits.slice(e + 1) || '0'}`;
}

const PY_ESCAPES: Record<string, string> = { '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t' };
/** What Python's str.isprintable refuses: other (control, format, surrogate, private, unassigned)
 * and separator characters, the ASCII space excepted. */
const NOT_PRINTABLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Zs}]/u;

/** Python's str repr: single quotes unless the text holds a single quote and no double one;
 * characters that are not printable as `\xNN`, `\uNNNN` or `\UNNNNNNNN`. */
function pyString(s: string): string {
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
  let out = quote;
  for (const ch of s) {
    if (ch === quote) out += `\\${quote}`;
    else if (PY_ESCAPES[ch] !== undefined) out += PY_ESCAPES[ch];
    else if (ch !== ' ' && NOT_PRINTABLE.test(ch)) out += pyEscape(ch.codePointAt(0)!);
    else out += ch;
  }
  return out + quote;
}

const pyEscape = (cp: number): string => {
  const hex = cp.toString(16);
  return cp < 0x100
    ? `\\x${hex.padStart(2, '0')}`
    : cp < 0x10000
      ? `\\u${hex.padStart(4, '0')}`
      : `\\U${hex.padStart(8, '0')}`;
};
