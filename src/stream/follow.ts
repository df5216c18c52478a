/**
 * Following a job: its events from an id on, as they happen, until it ends. The rail's records
 * are read when Temporal's history of the job moves (a long poll on the history: no history event
 * added) — from the delivery the move scheduled (./carried.ts), else with one query —
 * journaled, and read back from the store in the job's order;
 * model text is read from the store while a hop works. Any number of followers on any number of
 * servers read the same ids; a follower that resumes from its last id misses nothing durable.
 */
import { QueryNotRegisteredError, type Client } from '@temporalio/client';
import { describeJob, getJob, NoWorkerAnsweredError, readJob, type JobView } from '../operator/client';
import { acksQuery, progressQuery, statusQuery } from '../../workflows/definitions';
import type { handoffJob } from '../../workflows';
import { loadConfig } from '../config';
import { openStore } from '../worker/store';
import type { StreamStore } from '../worker/store/types';
import { jobEnded, publicState, railEvents, type JobEvent, type JobPublicState, type KeyedEvent } from './events';
import type { CarriedRecords } from './carried';
import { HistoryWatch } from './history-watch';
import { journalRailEvents, readJournal } from './journal';

export interface FollowOptions {
  /** Events after this id (the last one a follower saw; 0 or absent: from the first). */
  from?: number;
  /** Where the job's stream is kept: the workers' store (default: the configured one, opened
   * for this follow and closed after it: DATABASE_URL, else SQLite under HANDRAIL_DATA_DIR). */
  store?: StreamStore;
  /** How often the store is read for model text while a hop works and text comes (default 10 ms;
   * a read that finds nothing doubles the wait, up to 160 ms, until text comes again). */
  textPollMs?: number;
  signal?: AbortSignal;
  /** Told of the rail's records each time they are read (a feed checks late joiners' reads with them). */
  onRecords?: (events: readonly KeyedEvent[]) => void;
}

/** What a follower is handed: an event of the job's stream, or the job's state as it now stands
 * (sent whenever it changed; not numbered, a follower that resumes is sent it again). */
export type FollowItem = { kind: 'event'; event: JobEvent } | { kind: 'state'; state: JobPublicState };

/**
 * The job's events after `from`, in order, then its state whenever it changes; ends after the
 * job's `job_finished` (or when `signal` aborts). JobNotFoundError for a job Temporal does not know.
 */
export async function* followJob(client: Client, jobId: string, opts: FollowOptions = {}): AsyncGenerator<FollowItem> {
  if (opts.store) return yield* followIn(client, jobId, { ...opts, store: opts.store });
  const store = await openStore(loadConfig());
  try {
    yield* followIn(client, jobId, { ...opts, store });
  } finally {
    await store.close();
  }
}

async function* followIn(
  client: Client,
  jobId: string,
  opts: FollowOptions & { store: StreamStore },
): AsyncGenerator<FollowItem> {
  const watch = new HistoryWatch(client, jobId, opts.signal);
  let cursor = opts.from ?? 0;
  let shownState = '';
  let rail: RailRead | undefined;
  // Keys this follower has seen numbered: a rail read journals only what is new to it.
  const numbered = new Set<string>();
  const journal = async (events: RailRead['events']) => {
    const fresh = events.filter((e) => !numbered.has(e.key));
    await journalRailEvents(opts.store, jobId, fresh);
    for (const e of fresh) numbered.add(e.key);
    opts.onRecords?.(events);
  };
  // Whether the rail moved since its records were last read: only then are they read again (a
  // text poll between two moves reads the journal alone).
  let railMoved = true;
  let textWait = opts.textPollMs ?? TEXT_POLL_MS;
  try {
    // The watch reads the history as it stands first, so the rail read next is as new as that
    // history and only a later move wakes the follower (not a second read of the same records).
    await watch.moved(undefined);
    for (;;) {
      if (railMoved || !rail) {
        // The records the rail's newest delivery carried, when it has not moved since: no query.
        let read = carriedRail(jobId, watch.records);
        if (!read) {
          // A query is a task the job's worker serves (a few ms of its CPU each): a burst of moves
          // (a fast stage's hop ends, the next begins) is read once, a moment late — from the
          // history still, when the burst ends in a delivery.
          if (rail) await watch.quiet(QUIET_MS, QUIET_CAP_MS);
          // While the run is open and was read before, the light read does (one query). A run
          // whose rail has not moved yet is not asked: its first move is a delivery, read next.
          read =
            carriedRail(jobId, watch.records) ??
            (watch.unmoved
              ? undefined
              : await readRail(client, jobId, rail && !watch.closedRun ? { running: true } : {}));
        }
        if (!read) {
          rail = undefined;
          railMoved = await watch.moved(undefined);
          if (opts.signal?.aborted) return;
          continue;
        }
        rail = read;
        await journal(rail.events);
        // The state as it now stands goes first: the events read next end with the job's end, if it ended.
        const state = JSON.stringify(rail.state);
        if (state !== shownState) yield { kind: 'state', state: rail.state };
        shownState = state;
      }
      // An entry written after the records were read waits for them to be read again once; the
      // read right after that passes over what they still cannot place (only that read).
      let reread = false;
      let found = false;
      for (;;) {
        const read = await readJournal(opts.store, jobId, cursor, rail.events, { skipUnplaced: reread });
        for (const event of read.events) yield { kind: 'event', event };
        found ||= read.events.length > 0;
        const moved = read.reached !== cursor;
        cursor = read.reached;
        if (read.unplaced && !reread) {
          const again = await readRail(client, jobId);
          if (!again) break;
          await journal(again.events);
          rail = again;
          reread = true;
        } else if (!moved) break;
        else reread = false;
      }
      if (rail.ended || opts.signal?.aborted) return;
      // Model text comes while a hop works: the store is read for it between the rail's moves.
      // A hop that streams nothing (most stages are no model) is read less and less often: the
      // store's reads are the API server's, and a thousand quiet hops would keep it busy.
      textWait = found ? (opts.textPollMs ?? TEXT_POLL_MS) : Math.min(textWait * 2, TEXT_POLL_MAX_MS);
      railMoved = await watch.moved(rail.state.working.length > 0 ? textWait : undefined);
      if (opts.signal?.aborted) return;
    }
  } finally {
    watch.close();
  }
}

type RailRead = NonNullable<Awaited<ReturnType<typeof readRail>>>;

/** The rail's durable events and state as its newest delivery carried them (./carried.ts). */
function carriedRail(jobId: string, records: CarriedRecords | undefined): RailRead | undefined {
  if (!records) return undefined;
  const { status, acks } = records;
  return { events: railEvents({ jobId, status, acks }), state: publicState(status), ended: jobEnded(status) };
}

/** The rail's durable events and state now; undefined when no worker answers (the journal
 * keeps what was seen before, and the next history move asks again). `running`: whether the
 * run is known to be open (unknown: Temporal is asked, so a running job is read with the one
 * query and a closed one from its result, without a worker replaying it). */
export async function readRail(
  client: Client,
  jobId: string,
  opts: { running?: boolean } = {},
): Promise<{ events: KeyedEvent[]; state: JobPublicState; ended: boolean } | undefined> {
  try {
    const described = opts.running ? undefined : await describeJob(client, jobId);
    const running = opts.running ?? described?.status.name === 'RUNNING';
    const light = running ? await runningRecords(client, jobId) : undefined;
    // A run described as closed is read as described; one that was running is read anew (it ended meanwhile).
    const records =
      light ?? (described && !running ? await readJob(client, jobId, described) : await getJob(client, jobId));
    const events = railEvents({ jobId, status: records.status, acks: records.acks });
    return { events, state: publicState(records.status), ended: jobEnded(records.status) };
  } catch (err) {
    if (err instanceof NoWorkerAnsweredError) return undefined;
    throw err;
  }
}

/**
 * A job known to be running, read with the one query a follower needs (`progress`: the status
 * and the acks at one moment) and nothing else: no describe, no package. A worker of a build
 * without it answers `status`, then `acks` (the acks then include every hop the status
 * reflects). Undefined when the rail says the job ended or no worker answered in time: `getJob`
 * then reads it whole (the closed run's result, or Temporal's word on how it ended).
 */
async function runningRecords(client: Client, jobId: string): Promise<Pick<JobView, 'status' | 'acks'> | undefined> {
  const handle = client.workflow.getHandle<typeof handoffJob>(jobId);
  try {
    const records = await client.connection.withDeadline(Date.now() + RUNNING_READ_DEADLINE_MS, async () => {
      try {
        return await handle.query(progressQuery);
      } catch (err) {
        if (!(err instanceof QueryNotRegisteredError)) throw err;
        const status = await handle.query(statusQuery);
        return { status, acks: await handle.query(acksQuery) };
      }
    });
    return records.status.status === 'running' || records.status.status === 'escalated' ? records : undefined;
  } catch {
    return undefined;
  }
}

/** The store is read for a working hop's text this often while it comes, and at most this long apart. */
const TEXT_POLL_MS = 10;
const TEXT_POLL_MAX_MS = 160;

/** The rail is read once it has been still this long after a move, or this long at most after it. */
const QUIET_MS = 50;
const QUIET_CAP_MS = 250;

/** How long the light read waits for a worker before the whole read (with its own deadline) takes over. */
const RUNNING_READ_DEADLINE_MS = 5_000;
