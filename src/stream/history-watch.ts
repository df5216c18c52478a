/**
 * Tells a follower when a job's Temporal history moves: one long poll on the history
 * (`waitNewEvent`), kept open across waits, so a follower wakes on every workflow task the rail
 * completes and never asks the worker anything while nothing happens. Reads the history; adds
 * nothing to it. A job that continued as new is watched on its newest run.
 */
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { CarriedReader, type CarriedRecords } from './carried';

const ALL_EVENTS = temporal.api.enums.v1.HistoryEventFilterType.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT;
const { EventType } = temporal.api.enums.v1;

/** A history event after which the rail's records may have changed. */
const railMoved = (e: temporal.api.history.v1.IHistoryEvent) =>
  e.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED ||
  e.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED ||
  e.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CANCEL_REQUESTED ||
  e.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED ||
  e.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_TIMED_OUT;

/** How long to wait before polling again when the history cannot be read (a server restart). */
const RETRY_MS = 500;

/** Events asked per page, below the frontend's cap (256 by default): a shorter page is the
 * history's end as it stood, so what the watch read of the rail is current. */
const PAGE_SIZE = 200;

export class HistoryWatch {
  private readonly abort = new AbortController();
  private token: Uint8Array | undefined;
  private runId: string | undefined;
  private pending: Promise<void> | undefined;
  /** The pending poll as a wait's outcome, made once per poll (not once per wait). */
  private moves: Promise<boolean> = Promise.resolve(true);
  /** Resolves false when the watch closes; made once. */
  private readonly closing: Promise<boolean>;
  private closed = false;
  /** The watched run closed: the next poll waits a little and starts over on the newest run (a
   * job started again under its id). */
  private runClosed = false;
  /** The first poll answers at once, whatever it read. */
  private first = true;
  /** The rail's records as the run's deliveries carried them. */
  private readonly carried: CarriedReader;
  /** The last page read was the history's end as it stood (a longer history reads in pages). */
  private caughtUp = false;

  constructor(
    private readonly client: Client,
    private readonly jobId: string,
    signal?: AbortSignal,
  ) {
    this.carried = new CarriedReader(client.options.loadedDataConverter);
    signal?.addEventListener('abort', () => this.close(), { once: true });
    this.closing = new Promise((resolve) =>
      this.abort.signal.addEventListener('abort', () => resolve(false), { once: true }),
    );
  }

  /** Resolves true when the rail moved since the last call (a workflow task completed, or the
   * run closed; at once the first time), false after `timeoutMs` when given, or when the watch closes. */
  async moved(timeoutMs: number | undefined): Promise<boolean> {
    if (this.closed) return false;
    if (!this.pending) {
      this.pending = this.poll().finally(() => (this.pending = undefined));
      this.moves = this.pending.then(() => true);
    }
    let timer: NodeJS.Timeout | undefined;
    const waits: Promise<boolean>[] = [this.moves, this.closing];
    if (timeoutMs !== undefined)
      waits.push(new Promise((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs))));
    try {
      return await Promise.race(waits);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Waits until the rail has not moved for `quietMs`, at most `capMs` (at once when the run
   * closed): moves close together are then read once, not once each. */
  async quiet(quietMs: number, capMs: number): Promise<void> {
    const until = Date.now() + capMs;
    while (!this.closed && !this.runClosed) {
      const left = until - Date.now();
      if (left <= 0 || !(await this.moved(Math.min(quietMs, left)))) return;
    }
  }

  /** The rail's records as the newest delivery of the open run carried them, when the rail has
   * not moved since (./carried.ts); undefined when the rail must be asked. */
  get records(): CarriedRecords | undefined {
    return this.caughtUp && !this.runClosed ? this.carried.records : undefined;
  }

  /** The open run as read to its end has completed no workflow task: the rail recorded nothing
   * yet (its first move is awaited, not asked about). */
  get unmoved(): boolean {
    return this.caughtUp && !this.runClosed && this.carried.unmoved;
  }

  /** Whether the watched run has closed (the next read must learn how it ended). */
  get closedRun(): boolean {
    return this.runClosed;
  }

  close(): void {
    this.closed = true;
    this.abort.abort();
  }

  /** One long poll: resolves once events came (or the run closed, or the poll failed). */
  private async poll(): Promise<void> {
    if (this.runClosed) {
      await this.sleep(RETRY_MS);
      this.runClosed = false;
      this.token = this.runId = undefined;
      this.carried.reset();
    }
    for (;;) {
      if (this.closed) return;
      try {
        const res = await this.client.connection.withAbortSignal(this.abort.signal, () =>
          this.client.workflowService.getWorkflowExecutionHistory({
            namespace: this.client.options.namespace,
            execution: { workflowId: this.jobId, ...(this.runId ? { runId: this.runId } : {}) },
            waitNewEvent: true,
            skipArchival: true,
            historyEventFilterType: ALL_EVENTS,
            maximumPageSize: PAGE_SIZE,
            ...(this.token ? { nextPageToken: this.token } : {}),
          }),
        );
        const events = res.history?.events ?? [];
        const next = res.nextPageToken && res.nextPageToken.length > 0 ? res.nextPageToken : undefined;
        this.token = next;
        await this.carried.read(events);
        this.caughtUp = events.length < PAGE_SIZE;
        const last = events.at(-1);
        const newRun = last?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId;
        if (newRun) {
          this.runId = newRun;
          this.token = undefined;
          this.carried.reset();
        }
        // The run closed: nothing more comes on it (a run continued as new goes on above).
        if (!next && !newRun) this.runClosed = true;
        // Only the rail's own moves change what it recorded: a workflow task it completed (its
        // decisions, acks, upserts), or the run's close. An activity starting or a task being
        // scheduled changes nothing a follower reads.
        if (this.runClosed || newRun || this.first || events.some(railMoved)) {
          this.first = false;
          return;
        }
      } catch {
        if (this.closed) return;
        // A server restarting, a store failing: the follower reads again after a pause.
        await this.sleep(RETRY_MS);
        return;
      }
    }
  }

  /** A pause the watch's close ends. It holds the process while it lasts: a follower waiting out
   * a server restart is still waiting (an unref'd timer let a CLI's process end there, silently). */
  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => (clearTimeout(timer), resolve());
      const timer = setTimeout(() => (this.abort.signal.removeEventListener('abort', done), resolve()), ms);
      this.abort.signal.addEventListener('abort', done, { once: true });
    });
  }
}
