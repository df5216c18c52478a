/**
 * Replaying histories against workflow code: recorded files, one job, or every job a visibility
 * query matches, through one replay worker with production's data converter and interceptors.
 * `handrail replay` and the replay suite both run on this; a user's own test suite can too.
 * `--diff` (diff.ts, diff-stages.ts) runs recorded jobs through the current pipelines instead.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import type { DataConverter } from '@temporalio/common';
import { historyFromJSON, type History } from '@temporalio/common/lib/proto-utils';
import { temporal } from '@temporalio/proto';
import { DefaultLogger, Runtime, Worker, type WorkerPlugin, type WorkflowBundle } from '@temporalio/worker';
import { fetchJobHistory } from '../operator/client';
import { workflowRuntime } from '../worker/worker';
import { explainReplayError, type ReplayFailure } from './explain';
import { diffRecordedJob, recordedJob, type JobDiff, type RecordedJob } from './diff';
import { openStageRunner, type DiffPipelines } from './diff-stages';
import { bundleRail } from '../worker/bundle';
import type { HandrailPlugin } from '../plugin';

export { explainReplayError, eventTypeName, type ReplayFailure } from './explain';
export {
  ackDifference,
  describeRoute,
  diffRecordedJob,
  recordedJob,
  recordedResult,
  routeDifference,
  stageDifferences,
  type Difference,
  type JobDiff,
  type RecordedJob,
  type RecordedStep,
  type StageRun,
  type StageRunner,
} from './diff';
export { DiffModuleError, loadDiffPipelines, openStageRunner, type DiffPipelines } from './diff-stages';

/** A history to replay and what to call it in a report. */
export interface ReplaySource {
  /** The file it was read from, or the workflow id for one fetched from the server. */
  name: string;
  workflowId: string;
  history: History;
}

export type ReplayOutcome =
  | { history: string; workflowId: string; ok: true }
  | ({ history: string; workflowId: string; ok: false } & ReplayFailure);

export class HistoryFileError extends Error {
  override readonly name = 'HistoryFileError';
}

const enums = temporal.api.enums.v1;
/** The enum fields the SDK's loader rewrites, and their enums; it calls `.startsWith` on each. */
const ENUM_FIELDS: Record<string, Record<number, string>> = {
  parentClosePolicy: enums.ParentClosePolicy,
  workflowIdReusePolicy: enums.WorkflowIdReusePolicy,
  initiator: enums.ContinueAsNewInitiator,
  retryState: enums.RetryState,
};

type Json = Record<string, unknown>;
const named = (value: unknown, names: Record<number, string>) =>
  typeof value === 'number' ? (names[value] ?? value) : value;

/**
 * Proto3 JSON may spell an enum as its number (`"eventType": 1`), and some exporters do; the SDK's
 * `historyFromJSON` accepts only names and throws on numbers. This names them first; anything
 * that is not `{ events: [...] }` is left for historyFromJSON to refuse.
 */
export function withEnumNames(json: unknown): unknown {
  const events = (json as { events?: unknown } | null)?.events;
  if (!Array.isArray(events)) return json;
  return {
    ...(json as Json),
    events: events.map((event: Json) => {
      const key = Object.keys(event ?? {}).find((k) => k.endsWith('EventAttributes'));
      const attrs = key ? (event[key] as Json) : undefined;
      if (!key || !attrs) return { ...event, eventType: named(event?.eventType, enums.EventType) };
      const fixed: Json = { ...attrs };
      for (const [field, names] of Object.entries(ENUM_FIELDS))
        if (field in attrs) fixed[field] = named(attrs[field], names);
      const taskQueue = attrs.taskQueue as Json | undefined;
      if (taskQueue) fixed.taskQueue = { ...taskQueue, kind: named(taskQueue.kind, enums.TaskQueueKind) };
      const child = attrs.childWorkflowExecutionFailureInfo as Json | undefined;
      if (child)
        fixed.childWorkflowExecutionFailureInfo = { ...child, retryState: named(child.retryState, enums.RetryState) };
      return { ...event, eventType: named(event.eventType, enums.EventType), [key]: fixed };
    }),
  };
}

/**
 * Reads a history exported as JSON `{ "events": [...] }`: by `handrail history`, by
 * `temporal workflow show --output json`, or by the Web UI's download. Enum values may be spelled
 * `EVENT_TYPE_WORKFLOW_EXECUTION_STARTED` (recorder, CLI), `WorkflowExecutionStarted` (some Web UI
 * versions) or as numbers.
 */
export function readHistoryFile(file: string): History {
  try {
    return historyFromJSON(withEnumNames(JSON.parse(fs.readFileSync(file, 'utf8'))));
  } catch (err) {
    throw new HistoryFileError(`${path.basename(file)} is not a readable history: ${(err as Error).message}`);
  }
}

/**
 * A history file to replay. The workflow id is the one the history was recorded under (the
 * started event carries it; older servers omit it, and the file name stands in), so the workflow
 * sees the `job_id` it saw when it ran.
 */
export function historyFileSource(file: string): ReplaySource {
  const history = readHistoryFile(file);
  const workflowId =
    history.events?.[0]?.workflowExecutionStartedEventAttributes?.workflowId || path.basename(file, '.json');
  return { name: file, workflowId, history };
}

/** Each job's latest run, fetched one after the other (an unknown id throws JobNotFoundError). */
export async function* jobSources(client: Client, jobIds: readonly string[]): AsyncGenerator<ReplaySource> {
  for (const jobId of jobIds) yield { name: jobId, workflowId: jobId, history: await fetchJobHistory(client, jobId) };
}

/** Every run a visibility query matches (the Web UI's search syntax), fetched a few at a time. */
export async function* querySources(client: Client, query: string): AsyncGenerator<ReplaySource> {
  for await (const { workflowId, history } of client.workflow
    .list({ query })
    .intoHistories({ concurrency: 4, bufferLimit: 8 })) {
    // HistoryAndWorkflowId also admits JSON, hence `unknown`; intoHistories yields fetched Histories.
    yield { name: workflowId, workflowId, history: history as History };
  }
}

/** Quiet webpack and worker output; errors still show. */
const replayLogger = new DefaultLogger('WARN');

/**
 * sdk-core logs every determinism failure as a warning, which a report already explains. Installs
 * a quiet runtime for this process; a no-op when one is installed already (it is process-wide).
 */
export function quietReplayRuntime(): void {
  try {
    Runtime.install({
      logger: replayLogger,
      telemetryOptions: { logging: { filter: { core: 'ERROR', other: 'ERROR' } } },
    });
  } catch {
    // Already installed, by an earlier caller or by the process's owner.
  }
}

export interface ReplayOptions {
  /** A bundle to reuse across calls (bundling takes seconds); otherwise `workflowsPath` is bundled. */
  workflowBundle?: WorkflowBundle;
  /** The workflow module the worker runs, bundled when no `workflowBundle` is given. */
  workflowsPath?: string;
  /** Modules the worker preloads with it (the plugin's `preloadModules`). */
  preloadModules?: readonly string[];
  /** The data converter (default: the worker's, codec keys from the environment). */
  dataConverter?: DataConverter;
  /** The workers' plugin: its workflow module, preloaded modules and data converter, unless
   * given above. */
  plugin?: HandrailPlugin;
  /** Temporal plugins the workers run with (the OpenTelemetry one: its sinks); their workflow
   * interceptors must be in `workflowBundle`. */
  temporalPlugins?: WorkerPlugin[];
}

/** The workflow code bundled once, for every history of a run, as the worker bundles it. */
export function bundleWorkflows(
  workflowsPath: string,
  preloadModules: readonly string[] = [],
): Promise<WorkflowBundle> {
  return bundleRail(workflowsPath, replayLogger, preloadModules);
}

/** The bundle a replay runs: the one given, or the workflow module bundled. */
function replayBundle(opts: ReplayOptions): Promise<WorkflowBundle> {
  if (opts.workflowBundle) return Promise.resolve(opts.workflowBundle);
  const workflowsPath = opts.workflowsPath ?? opts.plugin?.workflowsPath;
  if (!workflowsPath)
    throw new TypeError('replay needs the workflow module (workflowsPath, or a plugin with one) or a workflowBundle');
  return bundleWorkflows(workflowsPath, opts.preloadModules ?? opts.plugin?.preloadModules);
}

/**
 * Replays each history in order on one replay worker, yielding an outcome per history as soon as
 * it is known (sources may stream from the server). Runs with production's data converter and
 * workflow interceptors (workflowRuntime): replay with another converter proves nothing.
 */
export async function* replayHistories(
  sources: Iterable<ReplaySource> | AsyncIterable<ReplaySource>,
  opts: ReplayOptions = {},
): AsyncGenerator<ReplayOutcome> {
  const workflowBundle = await replayBundle(opts);
  // runReplayHistories keeps only {history, workflowId} and yields after each history it was
  // handed, so the source it pulled last is the one each result belongs to.
  let current: ReplaySource | undefined;
  async function* tracked() {
    for await (const source of sources) {
      current = source;
      yield source;
    }
  }
  for await (const result of Worker.runReplayHistories(
    {
      ...workflowRuntime(opts.dataConverter ?? opts.plugin?.dataConverter),
      workflowBundle,
      ...(opts.temporalPlugins ? { plugins: opts.temporalPlugins } : {}),
      replayName: 'handrail-replay',
    },
    tracked(),
  )) {
    const { name, workflowId, history } = current!;
    yield result.error
      ? { history: name, workflowId, ok: false, ...explainReplayError(result.error, history) }
      : { history: name, workflowId, ok: true };
  }
}

/**
 * Replays history files, for a test suite:
 * `expect((await replayHistoryFiles(files)).filter((o) => !o.ok)).toEqual([])`.
 * Every file is read before anything is bundled, so an unreadable one fails fast (HistoryFileError).
 */
export async function replayHistoryFiles(files: readonly string[], opts: ReplayOptions = {}): Promise<ReplayOutcome[]> {
  const sources = files.map(historyFileSource);
  const outcomes: ReplayOutcome[] = [];
  for await (const outcome of replayHistories(sources, opts)) outcomes.push(outcome);
  return outcomes;
}

/** "happy-path.json: DeterminismViolationError: …": which history failed and why. */
export function describeReplayFailure(outcome: ReplayOutcome): string | undefined {
  return outcome.ok ? undefined : `${path.basename(outcome.history)}: ${outcome.error}: ${outcome.message}`;
}

/** `handrail replay --diff`'s options. */
export interface DiffOptions {
  /** The pipelines and stage activities to diff on. */
  pipelines: DiffPipelines;
}

/**
 * Diffs each history on the current pipelines, one report per history as soon as it is known
 * (sources may stream from the server). Each job runs in a store of its own. A history of
 * another workflow (a `stageHop`) is reported with a note and nothing compared.
 */
export async function* diffHistories(
  sources: Iterable<ReplaySource> | AsyncIterable<ReplaySource>,
  opts: DiffOptions,
): AsyncGenerator<JobDiff> {
  const set = opts.pipelines;
  for await (const source of sources) {
    const job = recordedJob(source.workflowId, source.history);
    if (!job) {
      yield {
        history: source.name,
        workflowId: source.workflowId,
        hops: 0,
        notes: ['not a handoffJob history: nothing to diff'],
      };
      continue;
    }
    yield await diffRecorded(source.name, job, set);
  }
}

/** Diffs one history already read as a job, on stage activities of its own store. */
export async function diffRecorded(name: string, job: RecordedJob, set: DiffPipelines): Promise<JobDiff> {
  const runner = await openStageRunner(set);
  try {
    return await diffRecordedJob(name, job, set.pipelines, runner.run, { asRecorded: new Set(set.asRecorded) });
  } finally {
    await runner.close();
  }
}

/** Diffs history files, for a test suite: `expect((await diffHistoryFiles(files)).filter((d) => d.first)).toEqual([])`. */
export async function diffHistoryFiles(files: readonly string[], opts: DiffOptions): Promise<JobDiff[]> {
  const diffs: JobDiff[] = [];
  for await (const diff of diffHistories(files.map(historyFileSource), opts)) diffs.push(diff);
  return diffs;
}
