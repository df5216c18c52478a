// What the long jobs do and what they leave, shared by the bench (bench/long-jobs/run.ts) and the
// integration test: a human sending a job on decision after decision, and a job's run chain read
// back from visibility and each run's history.
import type { Client } from '@temporalio/client';
import type { JobRequest } from '../../contracts';
import { DEFAULT_CONTINUE_AFTER_EVENTS, DEFAULT_CONTINUE_AFTER_UPDATES } from '../../workflows/job/continue-as-new';
import { decideUpdate, statusQuery } from '../../workflows/definitions';
import { encodedHistory } from '../history';

const pause = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Waits (polling the status query) for `probe` to hold; throws after `timeoutMs`. */
async function waitFor(what: string, probe: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await pause(50);
  }
}

/**
 * Sends a job on `decisions` times: each time it escalates, a reviewer answers `revise`. Until the
 * job takes a decision up, its status still says escalated, so each round waits for an escalation
 * at a later hop than the last. Returns the decisions sent.
 */
export async function sendOnByHuman(client: Client, jobId: string, decisions: number): Promise<number> {
  const job = client.workflow.getHandle(jobId);
  let hops = -1;
  for (let i = 1; i <= decisions; i++) {
    await waitFor(`escalation ${i} of ${jobId}`, async () => {
      const view = await job.query(statusQuery);
      if (view.status !== 'escalated' && view.status !== 'running')
        throw new Error(`${jobId} ended ${view.status} before decision ${i}: ${view.reason ?? ''}`);
      if (view.status !== 'escalated' || view.hops <= hops) return false;
      hops = view.hops;
      return true;
    });
    await job.executeUpdate(decideUpdate, { args: [{ action: 'revise', actor: 'reviewer', note: `round ${i}` }] });
  }
  return decisions;
}

export interface RunLink {
  runId: string;
  status: string;
  events: number;
  /** The history's size as the server stores it. */
  bytes: number;
  /** Decisions (updates) the run accepted. */
  updates: number;
  /** Why the run handed on to the next, or how it ended. */
  why: string;
}

/** The runs of a job id, oldest first, once `want` of them are listed and the last has closed. */
export async function runChain(
  client: Client,
  jobId: string,
  limits: JobRequest['continue_after'] = {},
  want = 1,
): Promise<RunLink[]> {
  let runs: { runId: string; status: string }[] = [];
  await waitFor(`${want} closed runs of ${jobId}`, async () => {
    runs = [];
    for await (const run of client.workflow.list({ query: `WorkflowId = "${jobId}"` }))
      runs.push({ runId: run.runId, status: run.status.name });
    return runs.length >= want && runs.every((r) => r.status !== 'RUNNING');
  });
  const links: RunLink[] = [];
  for (const run of runs.reverse()) {
    const history = await client.workflow.getHandle(jobId, run.runId).fetchHistory();
    const events = history.events ?? [];
    const updates = events.filter((e) => e.workflowExecutionUpdateAcceptedEventAttributes).length;
    const { bytes } = encodedHistory(history);
    links.push({
      ...run,
      events: events.length,
      bytes,
      updates,
      why: whyEnded(run.status, events.length, updates, limits),
    });
  }
  return links;
}

/** The threshold a continued run reached (the rail checks between steps, so a run passes it by a
 * step's events), else Temporal's own suggestion. */
function whyEnded(status: string, events: number, updates: number, limits: JobRequest['continue_after']): string {
  if (status !== 'CONTINUED_AS_NEW') return status.toLowerCase();
  const maxUpdates = limits?.updates ?? DEFAULT_CONTINUE_AFTER_UPDATES;
  const maxEvents = limits?.events ?? DEFAULT_CONTINUE_AFTER_EVENTS;
  if (updates >= maxUpdates) return `continued: ${updates} decisions ≥ continue_after.updates ${maxUpdates}`;
  if (events >= maxEvents) return `continued: history ${events} events ≥ continue_after.events ${maxEvents}`;
  return 'continued: Temporal suggested it (continueAsNewSuggested)';
}

/** One line per run: `run 2 <id>: 9,876 events, 3.9 MB, 120 decisions, continued: …`. */
export function formatChain(links: readonly RunLink[]): string[] {
  return links.map(
    (l, i) =>
      `run ${i + 1} ${l.runId}: ${l.events.toLocaleString('en-US')} events, ${(l.bytes / 1e6).toFixed(1)} MB, ${l.updates} decisions, ${l.why}`,
  );
}
