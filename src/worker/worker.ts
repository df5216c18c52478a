/**
 * The handrail worker: the rail (workflows) and the stages (activities) of a plugin's pipelines,
 * one Temporal worker per task queue they use. The shipped worker process is ./main.ts.
 */
import { textRetentionMs } from '../stream/journal';
import fs from 'node:fs';
import type { Tracer } from '@opentelemetry/api';
import type { DataConverter } from '@temporalio/common';
import type { NativeConnection, WorkerDeploymentOptions, WorkerOptions, WorkerPlugin } from '@temporalio/worker';
import { Worker } from '@temporalio/worker';
import { railActivities, type ActivityDeps, type RailActivities } from '../../activities';
import { workspaceProblem } from '../../activities/handover';
import type { StageActivity } from '../../activities/stage';
import { canonicalJson, stageTaskQueue, type Pipeline, type StageCard } from '../../contracts';
import { SEARCH_ATTRIBUTES } from '../../workflows/search-attributes';
import { handrailDataConverter } from '../codec';
import type { HandrailPlugin } from '../plugin';
import { loadConfig, type HandrailConfig, type WorkerRole } from '../config';
import { createChatModel, modelConfigFromEnv, withPrices, type PriceTable } from './model';
import type { Store } from './store';
import { railSinks } from './tracing';

/**
 * How workflow code is run: data converter (the payload codec, src/codec.ts), workflow
 * interceptors (today the SDK defaults) and the rail's sinks (hop tracing). Replay (src/replay)
 * uses the same, so a codec or interceptor added here is exercised by the replay suite too. A
 * live worker swaps in sinks bound to its own tracer. The converter reads the codec keys from the
 * environment unless one is given; malformed keys throw CodecConfigError.
 */
export function workflowRuntime(
  dataConverter: DataConverter = handrailDataConverter(),
): Pick<WorkerOptions, 'dataConverter' | 'interceptors' | 'sinks'> {
  return { dataConverter, sinks: railSinks() };
}

export interface HandrailWorkerOptions<P extends readonly Pipeline[] = readonly Pipeline[]> {
  connection: NativeConnection;
  /** The pipelines, their activities, the workflow module and the data converter (src/plugin.ts). */
  plugin: HandrailPlugin<P>;
  /** Namespace and the job's task queue; unless given, loadConfig()'s (TEMPORAL_NAMESPACE or the Temporal profile, HANDRAIL_TASK_QUEUE). */
  config?: Pick<HandrailConfig, 'namespace' | 'taskQueue'>;
  store: Store;
  /** Which stages this process runs (default `all`): `general` never registers a writer, `writer`
   * registers only the writers (and no workflows). */
  role?: WorkerRole;
  /** Where the writers write (their systems' own database); unset, the store's own tables. */
  writes?: Store;
  /** A prebuilt bundle (tests build one per run); otherwise workflows are bundled at start. */
  workflowBundle?: { code: string };
  /** Where hop spans go (src/worker/tracing.ts); the process's global tracer provider by default. */
  tracer?: Tracer;
  /** Root of the handover workspace (`transcript_materialize` trace files); it must exist.
   * Unset, each trace goes to a temp directory of its own. */
  workspace?: string;
  /** The Worker Deployment Version every worker of this process polls as (docs/cluster.md, "Rolling
   * out workflow changes"); unset, the workers are unversioned and a rollout replaces them. */
  deployment?: WorkerDeploymentOptions;
  /** Prices of the models the worker's model replies may name, by model id (docs/reference.md,
   * "Model prices"); added to HANDRAIL_MODEL_PRICES, an entry here winning. */
  modelPrices?: PriceTable;
  /** How long the steps of a model stage's delivery that never completed are kept (default 7
   * days): past it a retry of that delivery redoes them (and a write tool's key still writes
   * once). Pruned when the workers are created; a completed delivery's steps go at completion. */
  stageStepsRetentionMs?: number;
  /** Temporal worker plugins for every worker of the process, e.g. Temporal's OpenTelemetry plugin
   * from `temporalTelemetry` (src/worker/otel.ts), under whose activity spans a model stage's
   * GenAI spans then nest. */
  temporalPlugins?: WorkerPlugin[];
  /** Swap some activities (tests of a misbehaving stage). */
  // A method, so a test may type `real` as the activities it knows the worker has.
  overrideActivities?(real: RailActivities & Readonly<Record<string, unknown>>): Record<string, unknown>;
}

/** A week: longer than a stage activity is retried, so only deliveries given up on lose their steps. */
const STAGE_STEPS_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;

export class WorkerSetupError extends Error {
  override readonly name = 'WorkerSetupError';
  constructor(readonly problems: readonly string[]) {
    super(
      `worker refused to start (${problems.length} problem${problems.length === 1 ? '' : 's'}):\n- ${problems.join('\n- ')}`,
    );
  }
}

/** Every stage card of these pipelines, once; a stage name two pipelines define differently is a problem
 * (one worker registers one activity per name). */
export function stageCards(pipelines: readonly Pipeline[]): { cards: StageCard[]; problems: string[] } {
  const byName = new Map<string, { card: StageCard; pipeline: string }>();
  const problems: string[] = [];
  for (const pipeline of pipelines) {
    for (const card of pipeline.cards) {
      const seen = byName.get(card.name);
      if (!seen) byName.set(card.name, { card, pipeline: pipeline.name });
      else if (seen.card !== card && canonicalJson(seen.card) !== canonicalJson(card)) {
        problems.push(
          `stage "${card.name}" is defined differently by pipelines "${seen.pipeline}" and "${pipeline.name}"`,
        );
      }
    }
  }
  return { cards: [...byName.values()].map((v) => v.card), problems };
}

/** The rail's search attributes the namespace lacks (SEARCH_ATTRIBUTES). */
export async function missingSearchAttributes(connection: NativeConnection, namespace: string): Promise<string[]> {
  const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace });
  return Object.keys(SEARCH_ATTRIBUTES).filter((name) => !(name in (customAttributes ?? {})));
}

/** What to tell an operator whose namespace lacks some of the rail's search attributes: each with
 * its type, and the commands that register them on their own server or cluster. */
export function missingSearchAttributesProblem(namespace: string, missing: readonly string[]): string {
  const typed = missing.map((name) => `${name} (${SEARCH_ATTRIBUTES[name as keyof typeof SEARCH_ATTRIBUTES]})`);
  const commands = missing.map(
    (name) =>
      `  temporal operator search-attribute create --namespace ${namespace} --name ${name} --type ${SEARCH_ATTRIBUTES[name as keyof typeof SEARCH_ATTRIBUTES]}`,
  );
  return [
    `namespace "${namespace}" lacks the search attribute${missing.length === 1 ? '' : 's'} ${typed.join(', ')}; every job's first upsert would fail. Register ${missing.length === 1 ? 'it' : 'them'}:`,
    ...commands,
    '(a dev server takes them as --search-attribute Name=Type; `npm run server` and docker-compose.yml register all of them)',
  ].join('\n');
}

/** Which stages a process in `role` registers where: `job`, the stages on the job's task queue
 * (whose worker also runs the workflows; null on the writer side, which runs none), and `own`,
 * the activity-only queues with their stages. Writers belong to the writer side, the rest to the
 * general one; `all` is both. */
export function workerPlan(
  cards: readonly StageCard[],
  role: WorkerRole,
  jobQueue: string,
): { job: Set<string> | null; own: Map<string, string[]> } {
  const mine = cards.filter((card) => (card.writes !== null ? role !== 'general' : role !== 'writer'));
  const job =
    role === 'writer' ? null : new Set(mine.filter((c) => stageTaskQueue(c, jobQueue) === jobQueue).map((c) => c.name));
  const own = new Map<string, string[]>();
  for (const card of mine) {
    const queue = stageTaskQueue(card, jobQueue);
    if (!job?.has(card.name)) own.set(queue, [...(own.get(queue) ?? []), card.name]);
  }
  return { job, own };
}

/**
 * Workers for the rail and the stages of `role`. The job's task queue runs the workflows, the
 * rail's activities and the stages on it; every other queue a stage runs on (its card's own, or
 * the writers' queue: stageTaskQueue) gets an activity-only worker, so only a process holding
 * that stage's credentials runs it. A stage with no activity refuses to start (WorkerSetupError
 * lists every problem).
 */
export async function createHandrailWorkers<P extends readonly Pipeline[]>(
  opts: HandrailWorkerOptions<P>,
): Promise<Worker[]> {
  const { plugin } = opts;
  // The namespace the configuration (environment or Temporal profile) names, as the connection's.
  const config = opts.config ?? loadConfig();
  const role = opts.role ?? 'all';
  const modelConfig = withPrices(modelConfigFromEnv(), opts.modelPrices);
  const workspace = opts.workspace === undefined ? undefined : workspaceProblem(opts.workspace);
  if (workspace !== undefined)
    throw new WorkerSetupError([
      `handover workspace: ${workspace} (create it, or set HANDRAIL_WORKSPACE to a directory)`,
    ]);
  const deps: ActivityDeps = {
    store: opts.store,
    model: modelConfig ? createChatModel(modelConfig) : undefined,
    ...(opts.workspace === undefined ? {} : { workspace: opts.workspace }),
    ...(opts.writes ? { writes: opts.writes } : {}),
  };
  const stages = (plugin.activities?.(deps) ?? {}) as Record<string, StageActivity>;
  const real = { ...stages, ...railActivities(opts.store) } as RailActivities & Record<string, StageActivity>;
  const activities: Record<string, unknown> = { ...real, ...opts.overrideActivities?.(real) };
  const { cards, problems } = stageCards(plugin.pipelines);
  for (const card of cards)
    if (typeof activities[card.name] !== 'function')
      problems.push(`stage "${card.name}" has no activity (the plugin's \`activities\` must return one per stage)`);
  if (role !== 'writer' && !opts.workflowBundle && !plugin.workflowsPath)
    problems.push("the plugin has no `workflowsPath` (the module exporting createRail(pipelines)'s workflows)");
  if (problems.length > 0) throw new WorkerSetupError(problems);
  await opts.store.pruneStageSteps(new Date(Date.now() - (opts.stageStepsRetentionMs ?? STAGE_STEPS_RETENTION_MS)));
  // Model text past its retention (HANDRAIL_STREAM_RETENTION_S, checked here, at start); the API
  // servers prune as they serve too.
  textRetentionMs();
  await opts.store.pruneStreamEntries(new Date());
  // Only workflow code upserts search attributes; the writer side runs none.
  const unregistered = role === 'writer' ? [] : await missingSearchAttributes(opts.connection, config.namespace);
  if (unregistered.length > 0)
    throw new WorkerSetupError([missingSearchAttributesProblem(config.namespace, unregistered)]);
  const plan = workerPlan(cards, role, config.taskQueue);
  // Every queue of the process joins the version: an activity-only queue outside it would take a
  // pinned job's activities from any build.
  const versioned = opts.deployment ? { workerDeploymentOptions: opts.deployment } : {};
  const pick = (names: readonly string[]) => Object.fromEntries(names.map((name) => [name, activities[name]]));
  const workers = await Promise.all(
    [...plan.own].map(([taskQueue, names]) =>
      // Activity inputs and results are payloads too.
      Worker.create({
        connection: opts.connection,
        namespace: config.namespace,
        taskQueue,
        dataConverter: plugin.dataConverter,
        ...(opts.temporalPlugins ? { plugins: opts.temporalPlugins } : {}),
        activities: pick(names),
        ...versioned,
      }),
    ),
  );
  if (plan.job === null) return workers;
  // Besides the rail's own activities, the job's queue registers only its planned stages: a
  // general worker holds no writer activity at all.
  const job = plan.job;
  const stageNames = new Set(cards.map((c) => c.name));
  const main = await Worker.create({
    connection: opts.connection,
    namespace: config.namespace,
    taskQueue: config.taskQueue,
    // The plugin brings the data converter and the rail's bundler options.
    plugins: [plugin, ...(opts.temporalPlugins ?? [])],
    ...(opts.workflowBundle ? { workflowBundle: opts.workflowBundle } : { workflowsPath: plugin.workflowsPath! }),
    sinks: railSinks(opts.tracer),
    ...versioned,
    activities: Object.fromEntries(
      Object.entries(activities).filter(([name]) => !stageNames.has(name) || job.has(name)),
    ),
  });
  return [main, ...workers];
}

/** Runs workers until a shutdown signal; resolves once they drained. */
export async function runWorkers(workers: Worker[]): Promise<void> {
  await Promise.all(workers.map((w) => w.run()));
}

/** The worker's handover workspace: the default one (under the data directory) is created; one
 * set in HANDRAIL_WORKSPACE must exist, or the worker refuses to start. */
export function handoverWorkspace(
  config: Pick<HandrailConfig, 'workspace'>,
  env: NodeJS.ProcessEnv = process.env,
): string {
  if (!env.HANDRAIL_WORKSPACE) fs.mkdirSync(config.workspace, { recursive: true });
  return config.workspace;
}
