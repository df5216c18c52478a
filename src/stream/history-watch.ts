/**
 * Tells a follower when a job's Temporal history moves: one long poll on the history
 * (`waitNewEvent`), kept open across waits, so a follower wakes on every workflow task the rail
 * completes and never asks the worker anything while nothing happens. Reads the history; adds
 * nothing to it. A job that continued as new is watched on its newest run.
 */
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';

const ALL_EVENTS = temporal.api.enums.v1.HistoryEventFilterType.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT;

/** How long to wait before polling again when the history cannot be read (a server restart). */
const RETRY_MS = 500;

export class HistoryWatch {
  private readonly abort = new AbortController();
  private token: Uint8Array | undefined;
  private runId: string | undefined;
  private pending: Promise<void> | undefined;
  private closed = false;
  /** The watched run closed: the next poll waits a little and starts over on the newest run (a
   * job started again under its id). */
  private runClosed = false;

  constructor(
    private readonly client: Client,
    private readonly jobId: string,
    signal?: AbortSignal,
  ) {
    signal?.addEventListener('abort', () => this.close(), { once: true });
  }

  /** Resolves when the history moved since the last call (or at once the first time), after
   * `timeoutMs` when given, or when the watch closes. */
  async moved(timeoutMs: number | undefined): Promise<void> {
    if (this.closed) return;
    this.pending ??= this.poll().finally(() => (this.pending = undefined));
    let timer: NodeJS.Timeout | undefined;
    const closed = new Promise<void>((resolve) => this.abort.signal.addEventListener('abort', () => resolve()));
    const waits: Promise<void>[] = [this.pending, closed];
    if (timeoutMs !== undefined) waits.push(new Promise((resolve) => (timer = setTimeout(resolve, timeoutMs))));
    try {
      await Promise.race(waits);
    } finally {
      clearTimeout(timer);
    }
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
            ...(this.token ? { nextPageToken: this.token } : {}),
          }),
        );
        const events = res.history?.events ?? [];
        const next = res.nextPageToken && res.nextPageToken.length > 0 ? res.nextPageToken : undefined;
        this.token = next;
        const last = events.at(-1);
        const newRun = last?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId;
        if (newRun) {
          this.runId = newRun;
          this.token = undefined;
        }
        // The run closed: nothing more comes on it (a run continued as new goes on above).
        if (!next && !newRun) this.runClosed = true;
        if (events.length > 0 || this.runClosed) return;
      } catch {
        if (this.closed) return;
        // A server restarting, a store failing: the follower reads again after a pause.
        await this.sleep(RETRY_MS);
        return;
      }
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => setTimeout(resolve, ms).unref());
  }
}
