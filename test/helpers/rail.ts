/**
 * Integration helpers: a real worker (the production activities over a real store) on the
 * suite's dev server, on a task queue of its own so test files never steal each other's tasks.
 */
import { handrailLogger } from '../../src/worker/logger';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Tracer } from '@opentelemetry/api';
import { Client, Connection } from '@temporalio/client';
import type { DataConverter } from '@temporalio/common';
import type { temporal } from '@temporalio/proto';
import { NativeConnection, Runtime, type Worker, type WorkerDeploymentOptions } from '@temporalio/worker';
import { inject } from 'vitest';
import type { Pipeline } from '../../contracts';
import type { ActivityDeps } from '../../activities/deps';
import type { StageActivity } from '../../activities/stage';
import type { JobHandle } from '../../src/operator/client';
import type { StageHopRequest, StageHopResult } from '../../workflows/stage-hop';
import { statusQuery, type JobStatusView } from '../../workflows/definitions';
import { handrailDataConverter } from '../../src/codec';
import { sampleJobRequest } from '../../src/devtools/samples/tickets';
import type { TicketJobRequest } from '../../contracts/pipelines/ticket-artifacts';
import { openStore, type Store } from '../../src/worker/store';
import { builtInActivities, type HandrailActivities } from '../../activities/built-in';
import { HandrailPlugin } from '../../src/plugin';
import { BUILT_IN_PIPELINES } from '../../contracts/pipelines';
import { createHandrailWorkers, runWorkers } from '../../src/worker/worker';
import { activitiesScheduled } from '../../bench/history';

export interface Rail {
  client: Client;
  store: Store;
  taskQueue: string;
  /** The worker's pipelines when not the built-in ones: `startJob(client, request, rail)` starts with their attributes. */
  pipelines?: readonly Pipeline[];
  workers: Worker[];
  stop(): Promise<void>;
}

// Worker chatter (state changes, bundle stats) drowns test output; warnings still show.
try {
  Runtime.install({ logger: handrailLogger() });
} catch {
  // Already installed by an earlier file in this worker process.
}

let seq = 0;
/** Ids unique across runs: the dev server keeps history for the whole suite. */
export function uniqueId(prefix: string): string {
  return `${prefix}-${process.pid}-${Date.now().toString(36)}-${++seq}`;
}

export interface RailOptions {
  store?: Store;
  /** Replace or add activities by name (tests of a misbehaving stage); never shipped. */
  activities?: (real: HandrailActivities) => Partial<HandrailActivities> & Record<string, unknown>;
  /** A workflow bundle other than the suite's (tests that swap a module in the rail). */
  workflowBundle?: { code: string };
  /** Where the worker sends hop spans (tests read them back from an in-memory exporter). */
  tracer?: Tracer;
  /** Pipelines other than the built-in ones, with their stage activities (the bundle must run the same). */
  pipelines?: readonly Pipeline[];
  stageActivities?: (deps: ActivityDeps) => Record<string, StageActivity>;
  /** The worker's handover workspace (trace files); unset, a temp directory per trace. */
  workspace?: string;
  /** The data converter of the worker and the client (tests with codec keys); default: from the environment. */
  dataConverter?: DataConverter;
  /** A Temporal server other than the suite's (a test that needs its own server flags). */
  address?: string;
  /** A task queue shared with another rail (two worker builds polling one queue); default: one of its own. */
  taskQueue?: string;
  /** The Worker Deployment Version the workers poll as; default: unversioned. */
  deployment?: WorkerDeploymentOptions;
}

export async function startRail(opts: RailOptions = {}): Promise<Rail> {
  const address = opts.address ?? inject('temporalAddress');
  const namespace = inject('namespace');
  const taskQueue = opts.taskQueue ?? uniqueId('it');
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'handrail-store-'));
  const store = opts.store ?? (await openStore({ databaseUrl: process.env.DATABASE_URL, dataDir }));
  const nativeConnection = await NativeConnection.connect({ address });
  const connection = await Connection.connect({ address });
  const plugin = new HandrailPlugin({
    pipelines: opts.pipelines ?? BUILT_IN_PIPELINES,
    activities: (opts.stageActivities ?? builtInActivities) as (deps: ActivityDeps) => Record<string, StageActivity>,
    dataConverter: opts.dataConverter ?? handrailDataConverter(),
  });
  const client = new Client({ connection, namespace, plugins: [plugin] });
  const workers = await createHandrailWorkers({
    connection: nativeConnection,
    plugin,
    config: { namespace, taskQueue },
    store,
    workflowBundle: opts.workflowBundle ?? { code: fs.readFileSync(inject('workflowBundlePath'), 'utf8') },
    // The built-in stages are the real ones here (unless a test brings its own pipelines).
    ...(opts.activities ? { overrideActivities: opts.activities } : {}),
    ...(opts.tracer ? { tracer: opts.tracer } : {}),
    ...(opts.workspace ? { workspace: opts.workspace } : {}),
    ...(opts.deployment ? { deployment: opts.deployment } : {}),
  });
  const running = runWorkers(workers);
  return {
    client,
    store,
    taskQueue,
    ...(opts.pipelines ? { pipelines: opts.pipelines } : {}),
    workers,
    async stop() {
      for (const w of workers) w.shutdown();
      await running;
      await connection.close();
      await nativeConnection.close();
      if (!opts.store) await store.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** The sample refund job under a fresh id (and a ticket id of its own, so CRM rows never meet);
 * tests override what they exercise. */
export function jobRequest(overrides: Partial<TicketJobRequest> = {}): TicketJobRequest {
  const id = overrides.job_id ?? uniqueId('job');
  const sample = sampleJobRequest(id);
  // A shorter body than the demo's: its first draft passes, so the planned relay takes no revision.
  const body =
    'I upgraded to the annual plan yesterday and my card was charged twice. How do refunds work for a duplicate charge?';
  return {
    ...sample,
    ticket: { ...sample.ticket, id: `tkt_${id}`, body },
    budget: { usd: 1, revisions: 2 },
    ...overrides,
  };
}

/** One `stageHop` on the rail's queue, answered (its workflow id returned with it). */
export async function deliverHop(
  rail: Pick<Rail, 'client' | 'taskQueue'>,
  request: StageHopRequest,
  workflowId = uniqueId('hop'),
): Promise<StageHopResult & { workflowId: string }> {
  const result = await rail.client.workflow.execute<(r: StageHopRequest) => Promise<StageHopResult>>('stageHop', {
    taskQueue: rail.taskQueue,
    workflowId,
    args: [request],
  });
  return { ...result, workflowId };
}

const upsertedFields = (e: temporal.api.history.v1.IHistoryEvent) =>
  e.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields;

/** The keys of each Handrail search-attribute upsert in a history, in order (sdk-core's
 * `TemporalChangeVersion` upsert, which comes with a patch marker, left out). */
export function handrailUpserts(events: temporal.api.history.v1.IHistoryEvent[]): string[][] {
  return events.flatMap((e) => {
    const fields = upsertedFields(e);
    return fields && !('TemporalChangeVersion' in fields) ? [Object.keys(fields).sort()] : [];
  });
}

/** Each value a history's upserts gave one search attribute, in order. */
export function upsertedValues(events: temporal.api.history.v1.IHistoryEvent[], name: string): unknown[] {
  return events.flatMap((e) => {
    const field = upsertedFields(e)?.[name];
    return field ? [JSON.parse(Buffer.from(field.data!).toString('utf8')) as unknown] : [];
  });
}

/** Polls `probe` every 200 ms until it holds (visibility is a second or so behind the run), for up to 30 s. */
export async function until(what: string, probe: () => Promise<boolean>): Promise<void> {
  for (let tries = 0; !(await probe()); tries++) {
    if (tries > 150) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Activity types scheduled in a workflow's history, in order. */
export async function scheduledActivities(client: Client, workflowId: string): Promise<string[]> {
  return activitiesScheduled(await client.workflow.getHandle(workflowId).fetchHistory());
}

/** Stage work scheduled in a workflow's history: every activity but the rail's bookkeeping (the
 * duplicate lookup, an escalation's record). */
export async function stageActivities(client: Client, workflowId: string): Promise<string[]> {
  const bookkeeping = new Set(['priorDelivery', 'beginEscalationRecord', 'closeEscalationRecord']);
  return (await scheduledActivities(client, workflowId)).filter((name) => !bookkeeping.has(name));
}

/** Polls the job's live status until it is `want` (a job waiting on a human, say). */
export async function waitForStatus(
  handle: JobHandle,
  want: JobStatusView['status'],
  timeoutMs = 30_000,
): Promise<JobStatusView> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const view = await handle.query(statusQuery);
    if (view.status === want) return view;
    if (Date.now() > deadline) throw new Error(`job stayed ${view.status}, wanted ${want}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
