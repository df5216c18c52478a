/**
 * Where a working hop's model text (and its tool calls) goes while it is generated: the job's stream in the store
 * (live entries that expire), batched so a model writing a token at a time costs one write per
 * batch. The stage's worker opens it around the stage's work (activities/stage.ts); the model
 * finds it through async context (src/worker/model/streaming.ts), so no stage code changes.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { StreamStore } from '../worker/store/types';
import { journalText, journalToolCall, textRetentionMs, type EntryPlace } from './journal';

/** How long deltas gather before they are written (ms), and how much text at most. */
const BATCH_MS = 5;
const BATCH_CHARS = 256;

export interface HopTextTarget {
  store: StreamStore;
  jobId: string;
  hop: number;
  stage: string;
  retentionMs?: number;
  /** The tools whose call arguments a follower may see (the card's grants with `showArguments`). */
  showArguments?: ReadonlySet<string>;
  /** The activity's attempt (a retry's entries are its own) and the package's hop chain. */
  attempt?: number;
  chain?: readonly string[];
}

export class HopText {
  private pending = '';
  private part = 0;
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> = Promise.resolve();
  /** Whether an entry of this hop is in the store (the keys it must follow went with it). */
  private placed = false;

  /** Writes one entry after those before it: the hop's first carries the keys it must follow,
   * until one write holding them succeeded (a refused first write must not leave the next one's
   * text ahead of its hop's start). A failure loses this entry only: the live text is a view. */
  private append(write: (at: EntryPlace) => Promise<void>): void {
    this.writing = this.writing
      .then(async () => {
        await write({ attempt: this.target.attempt ?? 1, first: !this.placed, chain: this.target.chain ?? [] });
        this.placed = true;
      })
      .catch(() => undefined);
  }

  constructor(private readonly target: HopTextTarget) {}

  write(delta: string): void {
    if (delta.length === 0) return;
    this.pending += delta;
    if (this.pending.length >= BATCH_CHARS) this.flush();
    else this.timer ??= setTimeout(() => this.flush(), BATCH_MS);
  }

  /** A tool call starting or ending, after the text written before it. Arguments only for a
   * tool the card lets followers see them for. */
  toolCall(call: { call_id: string; name: string; phase: 'start' | 'end'; args?: unknown; ok?: boolean }): void {
    this.flush();
    const { store, jobId, hop, stage, retentionMs, showArguments } = this.target;
    const { args, ...rest } = call;
    const shown = args !== undefined && showArguments?.has(call.name) ? { args } : {};
    this.append((at) =>
      journalToolCall(store, jobId, { hop, stage, ...rest, ...shown }, retentionMs ?? textRetentionMs(), at),
    );
  }

  /** Writes what is pending; resolves once every write so far is in the store. Never throws:
   * the live text is a view, and a store hiccup must not fail the hop. */
  async close(): Promise<void> {
    this.flush();
    await this.writing;
  }

  private flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.pending.length === 0) return;
    const delta = this.pending;
    const part = this.part++;
    this.pending = '';
    const { store, jobId, hop, stage, retentionMs } = this.target;
    this.append((at) => journalText(store, jobId, { hop, stage, delta, part }, retentionMs ?? textRetentionMs(), at));
  }
}

const current = new AsyncLocalStorage<HopText>();

/** How often a worker removes text past its retention: after a hop, at most this often. */
const PRUNE_EVERY_MS = 10 * 60 * 1000;
let pruned = Date.now();

/** Runs `work` with its model text going to the job's stream; the text is all written when it ends. */
export async function withHopText<T>(target: HopTextTarget, work: () => Promise<T>): Promise<T> {
  const text = new HopText(target);
  try {
    return await current.run(text, work);
  } finally {
    await text.close();
    // The workers that write text are the ones that keep the store rid of it once it expired.
    if (Date.now() - pruned > PRUNE_EVERY_MS) {
      pruned = Date.now();
      await target.store.pruneStreamEntries(new Date()).catch(() => undefined);
    }
  }
}

/** The text sink of the hop this code runs in, if any. */
export function hopText(): HopText | undefined {
  return current.getStore();
}
