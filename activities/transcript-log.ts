/**
 * The job's tagged message log, kept in the store and out of Temporal history (seed 000's log,
 * seed 004's "full transcript in the store"). Each stage turn is one content-addressed record
 * pointing at the turn before it; the package carries only the newest turn's URI in
 * `memory_refs`, so a package — and the history it travels in — does not grow with the
 * conversation. A turn record names its (scoped) job: a URI of another job's log is refused, as
 * provenance refuses another job's artifacts.
 */
import { z } from 'zod';
import { canonicalJson, isTranscriptUri, LIMITS, Message, TaggedMessage, transcriptHead, type HandoffV1 } from '../contracts';
import { sha256Hex } from '../src/worker/store/content';
import type { Store } from '../src/worker/store';
import { stageFailure } from './failures';

/** What the next stage was handed over its edge, kept with its turn (`handrail transcript --stage`). */
export const HandoverRecord = z.object({
  used: z.string(),
  question_text: z.string(),
  history: z.array(Message),
  tokens: z.number().int().min(0),
  fell_back: z.boolean().optional(),
});
export type HandoverRecord = z.infer<typeof HandoverRecord>;

export const TurnRecord = z.object({
  v: z.literal(1),
  /** The scoped job id (`direct:` for stageHop deliveries). */
  job_id: z.string(),
  prev: z.string().regex(/^[0-9a-f]{64}$/).nullable(),
  stage: z.string(),
  /** The hop count of the delivery this turn answered. */
  turn: z.number().int().min(0),
  agent_id: z.string(),
  /** sha256 of the system prompt the stage ran with, so the next turn logs one only on a change. */
  system_sha: z.string().nullable(),
  handover: HandoverRecord.optional(),
  messages: z.array(TaggedMessage),
});
export type TurnRecord = z.infer<typeof TurnRecord>;

/** A log longer than any chain of hops the rail allows is not one the rail wrote. */
const MAX_TURNS = LIMITS.chain * 4;

export interface JobLog {
  /** Oldest first. */
  turns: TurnRecord[];
  /** sha of the newest turn, or null for a job whose log is empty. */
  head: string | null;
}

/** The log a package references, verified turn by turn; an empty log when it references none. */
export async function readLog(store: Store, pkg: Pick<HandoffV1, 'job_id' | 'memory_refs'>, scopedJobId: string): Promise<JobLog> {
  const refs = pkg.memory_refs.filter(isTranscriptUri);
  if (refs.length === 0) return { turns: [], head: null };
  if (refs.length > 1) throw stageFailure('ArtifactInvalid', `the package references ${refs.length} transcripts; a job has one log`);
  const ref = refs[0]!;
  const head = transcriptHead(ref, pkg.job_id);
  if (head === undefined) throw stageFailure('ArtifactInvalid', `transcript ${ref.slice(0, 120)} is not a transcript of job ${pkg.job_id}`);
  const turns: TurnRecord[] = [];
  for (let sha: string | null = head; sha !== null; sha = turns[0]!.prev) {
    if (turns.length >= MAX_TURNS) throw stageFailure('ArtifactInvalid', `transcript ${ref.slice(0, 120)} is longer than ${MAX_TURNS} turns`);
    turns.unshift(await readTurn(store, sha, scopedJobId, ref));
  }
  return { turns, head };
}

async function readTurn(store: Store, sha: string, scopedJobId: string, ref: string): Promise<TurnRecord> {
  const text = await store.getContent(sha);
  if (text === null || sha256Hex(text) !== sha) throw stageFailure('ArtifactInvalid', `transcript ${ref.slice(0, 120)}: turn ${sha} is not in the store`);
  let parsed: ReturnType<typeof TurnRecord.safeParse>;
  try {
    parsed = TurnRecord.safeParse(JSON.parse(text));
  } catch {
    throw stageFailure('ArtifactInvalid', `transcript ${ref.slice(0, 120)}: turn ${sha} is not a turn record`);
  }
  if (!parsed.success) throw stageFailure('ArtifactInvalid', `transcript ${ref.slice(0, 120)}: turn ${sha} is not a turn record`);
  // Content-addressing makes a record unforgeable, not job-bound: the job inside it binds it.
  if (parsed.data.job_id !== scopedJobId) throw stageFailure('ArtifactInvalid', `transcript ${ref.slice(0, 120)} was not recorded for this job`);
  return parsed.data;
}

/** Stores a turn and returns its sha (the same turn twice, e.g. a retried stage, is one record). */
export async function appendTurn(store: Store, turn: TurnRecord): Promise<string> {
  return store.putContent(canonicalJson(TurnRecord.parse(turn)));
}

/** Every message of the log, oldest first. */
export const logMessages = (log: JobLog): TaggedMessage[] => log.turns.flatMap((t) => t.messages);

/** The package's memory refs with its transcript ref replaced by `ref`: one log per package. */
export const withTranscript = (refs: readonly string[], ref: string): string[] => [...refs.filter((r) => !isTranscriptUri(r)), ref];
