/**
 * One reader per followed job per server, however many follow it: the first follower of a job
 * starts its feed (one `followJob` loop: the history long poll, the rail's queries, the journal
 * reads) and every follower of that job is handed the feed's items. A follower that joins late
 * reads what it missed from the journal once, then takes the feed's items from where that read
 * ended. Each follower holds at most `queueLimit` items it has not taken: past that it is told it
 * lagged and dropped (it resumes from its last id), so a follower that stops reading costs the
 * server a bounded amount of memory. A feed stops when its job ends or its last follower leaves.
 */
import type { Client } from '@temporalio/client';
import type { StreamStore } from '../worker/store/types';
import type { JobEvent, KeyedEvent } from './events';
import { followJob, readRail, type FollowItem } from './follow';
import { readJournal } from './journal';

/** What a follower of a feed is handed: the job's items, or word that it fell too far behind. */
export type FeedItem = FollowItem | { kind: 'lagged' };

export interface JobFeedsOptions {
  /** Items a follower may leave untaken before it is dropped as lagged (default 10,000; keep it
   * above one journal read, 500, which a reader hands out at once). */
  queueLimit?: number;
  textPollMs?: number;
}

/** How long a late joiner waits before asking again when no worker answers the rail's queries. */
const NO_WORKER_RETRY_MS = 500;

export class JobFeeds {
  private readonly feeds = new Map<string, JobFeed>();

  constructor(
    private readonly client: Client,
    private readonly store: StreamStore,
    private readonly options: JobFeedsOptions = {},
  ) {}

  /** How many jobs have a running feed here (for tests and metrics). */
  get running(): number {
    return this.feeds.size;
  }

  /** The job's items after `from` for one follower, until the job ends, the follower lags or `signal` aborts. */
  async *follow(jobId: string, from: number, signal: AbortSignal): AsyncGenerator<FeedItem> {
    let feed = this.feeds.get(jobId);
    if (!feed || feed.stopped) {
      // A feed reads the job from its first event whoever starts it: a follower's id (any
      // number a caller sends) never decides where the others start.
      feed = new JobFeed(this.client, this.store, jobId, 0, this.options, () => this.feeds.delete(jobId));
      this.feeds.set(jobId, feed);
    }
    yield* feed.follow(from, signal);
  }
}

class Follower {
  readonly items: FeedItem[] = [];
  /** The newest id this follower has been handed: older items are not queued for it. */
  cursor = 0;
  wake: (() => void) | undefined;
  lagged = false;
  ended = false;
  error: unknown;

  constructor(private readonly limit: number) {}

  push(item: FeedItem): void {
    if (this.lagged) return;
    if (item.kind === 'event' && item.event.id <= this.cursor) return;
    if (this.items.length >= this.limit) {
      this.lagged = true;
      this.items.length = 0;
      this.items.push({ kind: 'lagged' });
    } else this.items.push(item);
    this.wake?.();
  }

  end(error?: unknown): void {
    this.ended = true;
    this.error = error;
    this.wake?.();
  }
}

class JobFeed {
  private readonly followers = new Set<Follower>();
  /** Followers in `follow`, joined or still catching up. */
  private joining = 0;
  private readonly abort = new AbortController();
  /** The newest id the feed has handed out, and the job's state as last handed out. */
  private reached: number;
  private state: FollowItem | undefined;
  /** The rail's records as the feed last read them: what it has handed out was checked with them. */
  private records: readonly KeyedEvent[] | undefined;
  stopped = false;

  constructor(
    private readonly client: Client,
    private readonly store: StreamStore,
    private readonly jobId: string,
    from: number,
    private readonly options: JobFeedsOptions,
    private readonly onStop: () => void,
  ) {
    this.reached = from;
    void this.run();
  }

  async *follow(from: number, signal: AbortSignal): AsyncGenerator<FeedItem> {
    const me = new Follower(this.options.queueLimit ?? 10_000);
    const leave = () => me.end();
    signal.addEventListener('abort', leave, { once: true });
    // A follower counts from here: one still reading what it missed keeps the feed going.
    this.joining++;
    try {
      if (this.state) yield this.state;
      // What this follower missed before it joined is read from the journal, as often as the feed
      // moved on meanwhile; it joins the feed once it has caught up, in the same turn as the check,
      // so the feed's next item is the first it has not read.
      let cursor = from;
      me.cursor = from;
      while (cursor < this.reached && !this.stopped) {
        const read = await this.missed(cursor, this.reached, signal);
        if (!read) return;
        for (const event of read.events) {
          yield { kind: 'event', event };
          if (event.type === 'job_finished') return;
        }
        if (read.reached === cursor) break;
        cursor = me.cursor = read.reached;
      }
      if (this.stopped) {
        // The feed ended while this follower caught up: what is left is in the journal.
        yield* this.rest(cursor, signal);
        return;
      }
      this.followers.add(me);
      for (;;) {
        while (me.items.length > 0) {
          const item = me.items.shift()!;
          if (item.kind === 'event') {
            if (item.event.id <= cursor) continue;
            cursor = me.cursor = item.event.id;
          }
          yield item;
          if (item.kind === 'lagged' || (item.kind === 'event' && item.event.type === 'job_finished')) return;
        }
        if (me.ended) {
          if (me.error !== undefined && !signal.aborted) throw me.error;
          return;
        }
        await new Promise<void>((resolve) => (me.wake = resolve));
        me.wake = undefined;
      }
    } finally {
      signal.removeEventListener('abort', leave);
      this.followers.delete(me);
      this.joining--;
      if (this.joining === 0) this.stop();
    }
  }

  /** A follower arriving as the feed ended: the journal's events after `cursor`, read once. */
  private async *rest(cursor: number, signal: AbortSignal): AsyncGenerator<FeedItem> {
    for (;;) {
      const read = await this.missed(cursor, Number.MAX_SAFE_INTEGER, signal);
      if (!read) return;
      for (const event of read.events) yield { kind: 'event', event };
      if (read.reached === cursor) return;
      cursor = read.reached;
    }
  }

  private async run(): Promise<void> {
    let error: unknown;
    try {
      const items = followJob(this.client, this.jobId, {
        from: this.reached,
        store: this.store,
        signal: this.abort.signal,
        onRecords: (records) => (this.records = records),
        ...(this.options.textPollMs !== undefined ? { textPollMs: this.options.textPollMs } : {}),
      });
      for await (const item of items) {
        if (item.kind === 'event') this.reached = item.event.id;
        else this.state = item;
        for (const f of this.followers) f.push(item);
      }
    } catch (err) {
      error = err;
    } finally {
      this.stop();
      for (const f of this.followers) f.end(error);
    }
  }

  private stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.abort.abort();
    this.onStop();
  }

  /** The journal's events after `from` up to `to` (one read: 500 at most) and the seq the read
   * reached, checked against the rail's records read first; undefined if the follower left. */
  private async missed(
    from: number,
    to: number,
    signal: AbortSignal,
  ): Promise<{ events: JobEvent[]; reached: number } | undefined> {
    // Up to where the feed reached, its own records check the entries (a thousand joiners ask the
    // rail nothing); past it (the feed ended), they are read once more.
    let records = to <= this.reached ? this.records : undefined;
    while (!records && !signal.aborted) {
      records = (await readRail(this.client, this.jobId))?.events;
      if (!records) await new Promise((resolve) => setTimeout(resolve, NO_WORKER_RETRY_MS));
    }
    if (!records) return undefined;
    const read = await readJournal(this.store, this.jobId, from, records, { skipUnplaced: true });
    const events = read.events.filter((e) => e.id <= to);
    return { events, reached: Math.min(read.reached, to) };
  }
}
