/**
 * The journal: a job's stream in the store, one growing order for every server and worker on it.
 * Durable events are appended under their keys (the first server to see one numbers it; the
 * others find it numbered) and read back against the rail's records: an entry whose key the
 * rail's records do not hold is never shown, and a shown one carries the rail's content, so a
 * process that can write the store cannot forge an ack, a hop or an ending. Model text is
 * appended by the stage's worker as live entries that expire, shown only for a hop the rail
 * started at that stage.
 */
import { temporal } from '@temporalio/proto';
import { z } from 'zod';
import { AesGcmCodec, codecKeysFromEnv } from '../codec';
import type { StreamStore } from '../worker/store/types';
import { HUMAN } from '../../contracts/pipeline';
import type { DurableEvent, JobEvent, KeyedEvent, TextDelta, ToolCallEvent } from './events';

/** How long model text stays readable by default: an hour. */
export const DEFAULT_TEXT_RETENTION_MS = 60 * 60 * 1000;

/** HANDRAIL_STREAM_RETENTION_S (seconds), else the default; refuses a value that is not a
 * positive whole number. */
export function textRetentionMs(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.HANDRAIL_STREAM_RETENTION_S;
  if (raw === undefined || raw === '') return DEFAULT_TEXT_RETENTION_MS;
  if (!/^\d{1,9}$/.test(raw) || Number(raw) === 0)
    throw new Error(
      `HANDRAIL_STREAM_RETENTION_S must be a whole number of seconds (1 or more), not ${JSON.stringify(raw)}`,
    );
  return Number(raw) * 1000;
}

const TEXT_PREFIX = 'text:';
const TOOL_PREFIX = 'tool:';

/** The keys of a hop's start and finish in a job's stream (./events.ts derives them). A hop is
 * its number and its stage: a fan-out's branches share a number, each its own stage. */
export const hopStartKey = (hop: number, stage: string) => `hop:${hop}:${stage}`;
export const hopEndKey = (hop: number, stage: string) => `hop:${hop}:${stage}:end`;

/** A sealed body's prefix: the rest is a payload the codec encrypted, base64. */
const SEALED = 'sealed:';

let sealer: { source: string; codec: AesGcmCodec | undefined } | undefined;

/** The payload codec of this process's keys (HANDRAIL_CODEC_KEYS / _FILE), as the data converter has them. */
function codec(): AesGcmCodec | undefined {
  const source = `${process.env.HANDRAIL_CODEC_KEYS ?? ''}\u0000${process.env.HANDRAIL_CODEC_KEYS_FILE ?? ''}`;
  if (sealer?.source !== source) {
    const keys = codecKeysFromEnv();
    sealer = { source, codec: keys ? new AesGcmCodec(keys) : undefined };
  }
  return sealer.codec;
}

/** A body as the store keeps it: with codec keys, encrypted as a payload is (nothing plaintext
 * lands in the store: model text, reasons); without, as it is. */
export async function sealBody(body: string): Promise<string> {
  const c = codec();
  if (!c) return body;
  const [payload] = await c.encode([{ metadata: { encoding: Buffer.from('json/plain') }, data: Buffer.from(body) }]);
  return `${SEALED}${Buffer.from(temporal.api.common.v1.Payload.encode(payload!).finish()).toString('base64')}`;
}

/** A stored body as text; undefined when it is sealed with a key this process does not hold. */
export async function openBody(stored: string): Promise<string | undefined> {
  if (!stored.startsWith(SEALED)) return stored;
  const c = codec();
  if (!c) return undefined;
  try {
    const payload = temporal.api.common.v1.Payload.decode(Buffer.from(stored.slice(SEALED.length), 'base64'));
    const [plain] = await c.decode([payload]);
    return Buffer.from(plain!.data ?? []).toString('utf8');
  } catch {
    return undefined;
  }
}

/** Numbers the durable events the journal does not hold yet, in their order. */
export async function journalRailEvents(
  store: StreamStore,
  jobId: string,
  events: readonly KeyedEvent[],
): Promise<void> {
  if (events.length === 0) return;
  await store.appendStreamEntries(
    jobId,
    await Promise.all(events.map(async ({ key, event }) => ({ key, body: await sealBody(JSON.stringify(event)) }))),
  );
}

/** Appends one piece of a hop's model text (the stage's worker does, as the model writes it);
 * `first`: the hop's first entry, placed after the keys it must follow (placeHolders). */
export async function journalText(
  store: StreamStore,
  jobId: string,
  text: Omit<TextDelta, 'type'> & { part: number },
  retentionMs = textRetentionMs(),
  at: EntryPlace = { attempt: 1, first: text.part === 0, chain: [] },
): Promise<void> {
  const { part, ...delta } = text;
  await store.appendStreamEntries(jobId, [
    // The hop's start is numbered before its first text, whether or not a follower saw it start:
    // only its key counts (a reader shows the rail's record of it, never this body).
    ...(at.first ? await placeHolders(text.hop, text.stage, at.chain) : []),
    {
      // An attempt's text is its own: a retried activity's parts count from 0 again.
      key: `${TEXT_PREFIX}${text.hop}:${text.stage}:${at.attempt}:${part}`,
      body: await sealBody(JSON.stringify({ type: 'text_delta', ...delta })),
      expiresAt: new Date(Date.now() + retentionMs),
    },
  ]);
}

/** Where a live entry belongs: the activity attempt that wrote it, whether it is the hop's first
 * (placed after the keys it must follow), and the package's hop chain (stages by hop). */
export interface EntryPlace {
  attempt: number;
  first: boolean;
  chain: readonly string[];
}

/** How many earlier hops a hop's first entry places keys for (each key already numbered is left as it is). */
const PLACED_HOPS = 8;

/**
 * The keys a hop's first entry must come after, in the order a reader derives them, so that text
 * written before any follower read the job still reads in the job's order: the job's start, the
 * last PLACED_HOPS hops before it (their stages from the package's hop chain) as a relay's
 * accepted hops (start, ack, finish), this hop's start. Only keys count (a reader shows the rail's record under a key, never these bodies); one
 * the rail's records do not hold (the earlier hop was refused, or a human's) is never shown, and
 * the real one is numbered where a reader first sees it.
 */
async function placeHolders(
  hop: number,
  stage: string,
  chain: readonly string[],
): Promise<{ key: string; body: string }[]> {
  const keys = ['job'];
  for (const earlier of chainHops(chain, hop).slice(-PLACED_HOPS))
    keys.push(
      hopStartKey(earlier.hop, earlier.stage),
      `ack:${earlier.hop}:accepted:0`,
      hopEndKey(earlier.hop, earlier.stage),
    );
  keys.push(hopStartKey(hop, stage));
  const body = await sealBody(JSON.stringify({ type: 'placeholder', stage, hop }));
  return keys.map((key) => ({ key, body }));
}

/**
 * The stages' hops before this one, numbered as the rail numbers them (workflows/rail/hop-chain.ts:
 * a hop to or from a human keeps the count), from the chain the package carries (it starts at the
 * client; the last entry is this hop). None when the numbers do not come out at `hop` (a chain
 * cut short, a fork): then only this hop's start is placed.
 */
function chainHops(chain: readonly string[], hop: number): { hop: number; stage: string }[] {
  const hops: { hop: number; stage: string }[] = [];
  let count = 0;
  for (let i = 1; i < chain.length; i++) {
    if (i > 1 && chain[i - 1] !== HUMAN && chain[i] !== HUMAN) count++;
    if (chain[i] !== HUMAN) hops.push({ hop: count, stage: chain[i]! });
  }
  const last = hops.pop();
  return last?.hop === hop ? hops : [];
}

/** Appends a tool call's start or end (the stage's worker does, around the call). */
export async function journalToolCall(
  store: StreamStore,
  jobId: string,
  call: Omit<ToolCallEvent, 'type'>,
  retentionMs = textRetentionMs(),
  at: EntryPlace = { attempt: 1, first: false, chain: [] },
): Promise<void> {
  await store.appendStreamEntries(jobId, [
    ...(at.first ? await placeHolders(call.hop, call.stage, at.chain) : []),
    {
      key: `${TOOL_PREFIX}${call.hop}:${call.stage}:${at.attempt}:${call.call_id}:${call.phase}`,
      body: await sealBody(JSON.stringify({ type: 'tool_call', ...call })),
      expiresAt: new Date(Date.now() + retentionMs),
    },
  ]);
}

/**
 * The job's events after `afterSeq` as a follower may see them, and the seq the read reached.
 * An entry these records cannot place (text of a hop they do not show started, a key they do not
 * hold: written after they were read) stops the read before it (`unplaced`), so the caller can
 * read the rail again; with `skipUnplaced` (records read after the entry was) it is passed over.
 */
export async function readJournal(
  store: StreamStore,
  jobId: string,
  afterSeq: number,
  rail: readonly KeyedEvent[],
  opts: { skipUnplaced?: boolean; limit?: number } = {},
): Promise<{ events: JobEvent[]; reached: number; unplaced: boolean }> {
  const byKey = new Map(rail.map((k) => [k.key, k.event] as const));
  const started = new Set(
    rail.flatMap(({ event }) => (event.type === 'hop_started' ? [`${event.hop}:${event.stage}`] : [])),
  );
  const entries = await store.readStreamEntries(jobId, afterSeq, opts.limit ?? 500);
  const events: JobEvent[] = [];
  let reached = afterSeq;
  for (const entry of entries) {
    const live = entry.key.startsWith(TEXT_PREFIX)
      ? 'text_delta'
      : entry.key.startsWith(TOOL_PREFIX)
        ? 'tool_call'
        : undefined;
    const event = live
      ? shownLive(live, await openBody(entry.body), started)
      : (byKey.get(entry.key) ??
        (entry.key.startsWith('escalation:') ? pastEscalation(entry.key, await openBody(entry.body)) : undefined));
    if (event) events.push({ ...event, id: entry.seq });
    else if (!opts.skipUnplaced) return { events, reached, unplaced: true };
    reached = entry.seq;
  }
  return { events, reached, unplaced: false };
}

/** What a live entry may hold (model text, a tool call), and a past escalation's copy: checked
 * with zod before anything from the store is shown (a store writer's row is only a claim). */
const LiveEntry = z.discriminatedUnion('type', [
  z.object({ type: z.literal('text_delta'), stage: z.string(), hop: z.number().int(), delta: z.string() }),
  z.object({
    type: z.literal('tool_call'),
    stage: z.string(),
    hop: z.number().int(),
    call_id: z.string(),
    name: z.string(),
    phase: z.enum(['start', 'end']),
    args: z.unknown().optional(),
    ok: z.boolean().optional(),
  }),
]);
const PastEscalation = z.object({
  type: z.literal('escalated'),
  escalation: z.object({
    reasons: z.array(z.string()),
    blocked: z.string(),
    options: z.array(z.string()),
    since: z.string(),
  }),
});

/** A stored body as JSON, or undefined (sealed with a key this process lacks, or not JSON). */
function parsedBody(body: string | undefined): unknown {
  if (body === undefined) return undefined;
  try {
    return JSON.parse(body) as unknown;
  } catch {
    return undefined;
  }
}

/** An escalation the rail's status no longer shows (a human decided it): the journal's copy,
 * written when the status showed it, shown only when well formed under its own key (a limit:
 * docs/threat-model.md, the stream). */
function pastEscalation(key: string, body: string | undefined): DurableEvent | undefined {
  const parsed = PastEscalation.safeParse(parsedBody(body));
  if (!parsed.success || key !== `escalation:${parsed.data.escalation.since}`) return undefined;
  return parsed.data as DurableEvent;
}

/** A live entry (text, a tool call) when it is well formed, of the kind its key says, and belongs
 * to a hop the rail started at its stage. */
function shownLive(
  type: (TextDelta | ToolCallEvent)['type'],
  body: string | undefined,
  started: ReadonlySet<string>,
): TextDelta | ToolCallEvent | undefined {
  const parsed = LiveEntry.safeParse(parsedBody(body));
  if (!parsed.success || parsed.data.type !== type) return undefined;
  return started.has(`${parsed.data.hop}:${parsed.data.stage}`) ? parsed.data : undefined;
}
