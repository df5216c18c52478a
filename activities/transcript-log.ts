/**
 * The job's tagged message log, kept in the store and out of Temporal history: the
 * full transcript stays in the store, the package stays small. Each stage turn is one content-addressed record
 * pointing at the turn before it; the package carries only the newest turn's URI in
 * `memory_refs`, so a package — and the history it travels in — does not grow with the
 * conversation. A turn record names its (scoped) job: a URI of another job's log is refused, as
 * provenance refuses another job's artifacts. What a stage was handed (a transcript inlined in
 * its question, say) is a record of its own, referenced from the turn, so the log's records
 * stay the size of the messages themselves.
 */
import { z } from 'zod';
import {
  canonicalJson,
  isTranscriptUri,
  LIMITS,
  Message,
  TaggedMessage,
  transcriptHead,
  transcriptUri,
  type HandoffV1,
} from '../contracts';
import { sha256Hex } from '../src/worker/store/content';
import type { Store } from '../src/worker/store';
import { stageFailure } from './failures';

const Sha = z.string().regex(/^[0-9a-f]{64}$/);

/** What the next stage was handed over its edge (`handrail transcript --stage`), as stored. */
const HandoverContent = z.object({
  kind: z.literal('handrail.handover'),
  used: z.string(),
  question_text: z.string(),
  history: z.array(Message),
  tokens: z.number().int().min(0),
  fell_back: z.boolean().optional(),
});
/** What a stage was handed: the question as handed over, the history, the strategy used, tokens. */
export type HandoverRecord = Omit<z.infer<typeof HandoverContent>, 'kind'>;

/** A turn as stored: the handover by reference. */
const StoredTurn = z
  .object({
    kind: z.literal('handrail.turn'),
    /** The scoped job id (`direct:` for stageHop deliveries). */
    job_id: z.string(),
    prev: Sha.nullable(),
    stage: z.string(),
    /** The hop count of the delivery this turn answered. */
    turn: z.number().int().min(0),
    agent_id: z.string(),
    /** sha256 of the system prompt the stage ran with, so the next turn logs one only on a change. */
    system_sha: Sha.nullable(),
    handover: z
      .object({ used: z.string(), tokens: z.number().int().min(0), fell_back: z.boolean().optional(), record: Sha })
      .optional(),
    messages: z.array(TaggedMessage),
  })
  .strict();
export type StoredTurn = z.infer<typeof StoredTurn>;

/** A turn with what its stage was handed, as `readLog` returns it. */
export type TurnRecord = Omit<StoredTurn, 'kind' | 'handover'> & { handover?: HandoverRecord };

/** A log longer than any chain of hops the rail allows is not one the rail wrote. */
const MAX_TURNS = LIMITS.chain * 4;

/** The job's log as a stage reads it: its newest turn, and every message on demand. */
export interface LogHead {
  /** sha of the newest turn, or null for a job whose log is empty. */
  sha: string | null;
  turn: StoredTurn | undefined;
  /** Every message of the log, oldest first (read once, on first call). */
  messages(): Promise<TaggedMessage[]>;
}

/** The newest turn the package references, verified; the rest of the log is read only if asked. */
export async function readHead(
  store: Store,
  pkg: Pick<HandoffV1, 'job_id' | 'memory_refs'>,
  scopedJobId: string,
): Promise<LogHead> {
  const ref = transcriptRef(pkg);
  if (ref === undefined) return { sha: null, turn: undefined, messages: () => Promise.resolve([]) };
  const head = await readStored(store, ref.head, scopedJobId, ref.uri);
  let all: Promise<TaggedMessage[]> | undefined;
  return {
    sha: ref.head,
    turn: head,
    messages: () => (all ??= chain(store, head, scopedJobId, ref.uri).then((turns) => logMessages({ turns }))),
  };
}

/** The whole log a package references, each turn with what its stage was handed (operators, tests). */
export async function readLog(
  store: Store,
  pkg: Pick<HandoffV1, 'job_id' | 'memory_refs'>,
  scopedJobId: string,
): Promise<{ turns: TurnRecord[] }> {
  const ref = transcriptRef(pkg);
  if (ref === undefined) return { turns: [] };
  const stored = await chain(store, await readStored(store, ref.head, scopedJobId, ref.uri), scopedJobId, ref.uri);
  const turns = await Promise.all(
    stored.map(async ({ handover, ...turn }): Promise<TurnRecord> => {
      const { kind: _kind, ...rest } = turn;
      if (!handover) return rest;
      const { kind: _handoverKind, ...handed } = await readRecord(
        store,
        handover.record,
        HandoverContent,
        ref.uri,
        'handover',
      );
      return { ...rest, handover: handed };
    }),
  );
  return { turns };
}

function transcriptRef(pkg: Pick<HandoffV1, 'job_id' | 'memory_refs'>): { uri: string; head: string } | undefined {
  const refs = pkg.memory_refs.filter(isTranscriptUri);
  if (refs.length === 0) return undefined;
  if (refs.length > 1)
    throw stageFailure('ArtifactInvalid', `the package references ${refs.length} transcripts; a job has one log`);
  const uri = refs[0]!;
  const head = transcriptHead(uri, pkg.job_id);
  if (head === undefined)
    throw stageFailure('ArtifactInvalid', `transcript ${uri.slice(0, 120)} is not a transcript of job ${pkg.job_id}`);
  return { uri, head };
}

/** The turns from the first to `head`, oldest first. */
async function chain(store: Store, head: StoredTurn, scopedJobId: string, uri: string): Promise<StoredTurn[]> {
  const turns = [head];
  for (let sha = head.prev; sha !== null; sha = turns[0]!.prev) {
    if (turns.length >= MAX_TURNS)
      throw stageFailure('ArtifactInvalid', `transcript ${uri.slice(0, 120)} is longer than ${MAX_TURNS} turns`);
    turns.unshift(await readStored(store, sha, scopedJobId, uri));
  }
  return turns;
}

async function readStored(store: Store, sha: string, scopedJobId: string, uri: string): Promise<StoredTurn> {
  const turn = await readRecord(store, sha, StoredTurn, uri, 'turn');
  // Content-addressing makes a record unforgeable, not job-bound: the job inside it binds it.
  if (turn.job_id !== scopedJobId)
    throw stageFailure('ArtifactInvalid', `transcript ${uri.slice(0, 120)} was not recorded for this job`);
  return turn;
}

async function readRecord<S extends z.ZodType>(
  store: Store,
  sha: string,
  schema: S,
  uri: string,
  what: 'turn' | 'handover',
): Promise<z.infer<S>> {
  const text = await store.getContent(sha);
  if (text === null || sha256Hex(text) !== sha)
    throw stageFailure('ArtifactInvalid', `transcript ${uri.slice(0, 120)}: record ${sha} is not in the store`);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success)
    throw stageFailure('ArtifactInvalid', `transcript ${uri.slice(0, 120)}: record ${sha} is not a ${what} record`);
  return parsed.data;
}

/** Stores a turn, its handover a record of its own; returns the turn's sha (the same turn twice,
 * e.g. a retried stage, is one record). */
export async function appendTurn(store: Store, turn: TurnRecord): Promise<string> {
  const { handover, ...rest } = turn;
  const record =
    handover &&
    (await store.putContent(canonicalJson(HandoverContent.parse({ kind: 'handrail.handover', ...handover }))));
  const stored: StoredTurn = {
    kind: 'handrail.turn',
    ...rest,
    ...(handover && record
      ? {
          handover: {
            used: handover.used,
            tokens: handover.tokens,
            ...(handover.fell_back ? { fell_back: true } : {}),
            record,
          },
        }
      : {}),
  };
  return store.putContent(canonicalJson(StoredTurn.parse(stored)));
}

/**
 * A fan-out's branches each took their turns on the hub's log (each branch's chain starts from the
 * hub's newest turn). The merge keeps the log one line: it re-chains every branch's own turns
 * after the hub's newest, in the fan-out's order, and returns the new newest turn's URI — or
 * undefined when no branch took a turn. Records are content-addressed, so a retried merge writes
 * the same records.
 */
export async function joinBranchTurns(
  store: Store,
  hub: Pick<HandoffV1, 'job_id' | 'memory_refs'>,
  branches: readonly Pick<HandoffV1, 'memory_refs'>[],
  scopedJobId: string,
): Promise<string | undefined> {
  const hubHead = (await readHead(store, hub, scopedJobId)).sha;
  let prev = hubHead;
  for (const branch of branches) {
    const ref = transcriptRef({ job_id: hub.job_id, memory_refs: branch.memory_refs });
    if (!ref || ref.head === hubHead) continue;
    const log = await chain(store, await readStored(store, ref.head, scopedJobId, ref.uri), scopedJobId, ref.uri);
    // The branch's own turns: from the one that followed the hub's newest (null: the log's first).
    const own = log.slice(
      Math.max(
        0,
        log.findIndex((t) => t.prev === hubHead),
      ),
    );
    for (const turn of own) prev = await store.putContent(canonicalJson(StoredTurn.parse({ ...turn, prev })));
  }
  return prev !== null && prev !== hubHead ? transcriptUri(hub.job_id, prev) : undefined;
}

/** Every message of a log, oldest first. */
export const logMessages = (log: { turns: readonly Pick<StoredTurn, 'messages'>[] }): TaggedMessage[] =>
  log.turns.flatMap((t) => t.messages);

/** The package's memory refs with its transcript ref replaced by `ref`: one log per package. */
export const withTranscript = (refs: readonly string[], ref: string): string[] => [
  ...refs.filter((r) => !isTranscriptUri(r)),
  ref,
];
