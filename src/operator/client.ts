/**
 * The client API operators and scripts use to start, follow, inspect, decide, cancel, list and
 * export jobs (the CLI is a thin layer over it).
 * A job id is a business key: workflow id = job_id, and starting a job whose id already exists
 * (running or closed) never creates a second job — `startJob` attaches to the existing one.
 */
import {
  Client,
  ServiceError,
  WorkflowExecutionAlreadyStartedError,
  WorkflowUpdateFailedError,
  isGrpcDeadlineError,
  type WorkflowHandle,
} from '@temporalio/client';
import {
  IllegalStateError,
  WorkflowIdConflictPolicy,
  WorkflowIdReusePolicy,
  WorkflowNotFoundError,
  type SearchAttributePair,
} from '@temporalio/common';
import { historyToJSON, type History } from '@temporalio/common/lib/proto-utils';
import {
  HumanDecision,
  JobRequest,
  entryBodyIssues,
  findPipeline,
  issueLines,
  neutraliseBidi,
  requestEntry,
  type Pipeline,
  type AckRecord,
  type AckState,
  type HandoffV1,
  type JobResult,
  type LastVerdict,
} from '../../contracts';
import type { handoffJob } from '../../workflows';
import {
  acksQuery,
  decideUpdate,
  packageQuery,
  statusQuery,
  type DecisionReceipt,
  type JobStatusView,
  type RailStatus,
} from '../../workflows/definitions';
import {
  HandrailAck,
  HandrailAcks,
  HandrailForkOf,
  HandrailHops,
  HandrailPipeline,
  HandrailStage,
  HandrailStatus,
  HandrailUsdRemaining,
  HandrailVerdict,
  jobSearchAttributes,
  type JobAttributes,
} from '../../workflows/search-attributes';
import { startingAttributes } from '../../workflows/rail/first-package';
import { DEFAULT_MAX_HOPS } from '../../workflows/rail/hop-chain';
import { handrailDataConverter } from '../codec';
import { jobTaskQueue, loadConfig, type HandrailConfig } from '../config';
import { connectClient } from '../connect';
import { handrailPluginOf, type HandrailPlugin } from '../plugin';

export class InvalidJobRequestError extends Error {
  override readonly name = 'InvalidJobRequestError';
  constructor(readonly issues: { path: string; message: string }[]) {
    super(`invalid job request: ${issues.map((i) => `${i.path || 'request'}: ${i.message}`).join('; ')}`);
  }
}

export type JobHandle = WorkflowHandle<typeof handoffJob>;

export interface StartedJob {
  handle: JobHandle;
  /** False when a job with this id already existed and was returned instead. */
  created: boolean;
}

/** Connects a client to the configured server (clear error within seconds when it is down). With
 * the plugin the workers run, the client converts payloads as they do and `startJob` knows the
 * pipelines; without one, payloads use the codec keys from the environment (src/codec.ts). */
export async function connectHandrail(config: HandrailConfig = loadConfig(), plugin?: HandrailPlugin): Promise<Client> {
  const connection = await connectClient(config);
  return new Client({
    connection,
    namespace: config.namespace,
    ...(plugin ? { plugins: [plugin] } : { dataConverter: handrailDataConverter() }),
  });
}

/** Checks a request against the contract before anything is started, and its entry against its
 * pipeline's entry schema when the pipelines are known (the rail checks it again either way). */
export function parseJobRequest(input: unknown, pipelines: readonly Pipeline[] = []): JobRequest {
  const parsed = JobRequest.safeParse(input);
  if (!parsed.success) {
    // Every problem at once, in one wording: a missing entry is named with the contract's issues.
    const issues = parsed.error.issues.map((i) => ({
      path: i.path.join('.'),
      message: i.code === 'invalid_type' && / received undefined$/.test(i.message) ? 'Required' : i.message,
    }));
    const raw = (input !== null && typeof input === 'object' ? input : {}) as Record<string, unknown>;
    const pipeline = findPipeline(pipelines, typeof raw.pipeline === 'string' ? raw.pipeline : undefined);
    const alias = pipeline?.entrySpec.alias;
    if (pipeline && raw.entry === undefined && (alias === undefined || raw[alias] === undefined))
      issues.push({ path: 'entry', message: `Required (a ${pipeline.entry})` });
    throw new InvalidJobRequestError(issues);
  }
  // The entry as the rail will check it, so a caller hears what is wrong before a job starts.
  const pipeline = findPipeline(pipelines, parsed.data.pipeline);
  if (pipeline) {
    const { alias } = pipeline.entrySpec;
    if (parsed.data.entry !== undefined && alias !== undefined && parsed.data[alias] !== undefined) {
      throw new InvalidJobRequestError([
        { path: alias, message: `give the ${pipeline.entry} as entry only, not also as ${alias}` },
      ]);
    }
    const field =
      parsed.data.entry === undefined && alias !== undefined && parsed.data[alias] !== undefined ? alias : 'entry';
    const body = requestEntry(parsed.data, pipeline.entrySpec);
    const issues =
      body === undefined
        ? [{ path: '', message: `Required (a ${pipeline.entry})` }]
        : entryBodyIssues(pipeline.entrySpec.schema, body);
    if (issues.length > 0)
      throw new InvalidJobRequestError(
        issues.map((i) => ({ path: i.path ? `${field}.${i.path}` : field, message: i.message })),
      );
  }
  return parsed.data;
}

/** Where a job starts: the task queue, and the pipelines its worker runs (the same list, in the
 * same order, as the worker's `createRail`). By default the pipelines of the client's
 * `HandrailPlugin`; with none known, the job starts without its first search attributes and the
 * rail publishes them at its first hop. */
export interface StartOptions extends Pick<HandrailConfig, 'taskQueue'> {
  pipelines?: readonly Pipeline[];
}

export async function startJob(
  client: Client,
  input: unknown,
  options: Partial<StartOptions> = {},
): Promise<StartedJob> {
  const pipelines = options.pipelines ?? handrailPluginOf(client)?.pipelines;
  const request = parseJobRequest(input, pipelines);
  // The job shows its attributes from the start (before a worker picks it up), and the rail's first
  // hop then has none to upsert.
  const pipeline = pipelines && findPipeline(pipelines, request.pipeline);
  try {
    const handle = await client.workflow.start<typeof handoffJob>('handoffJob', {
      // Not loadConfig(): that reads the Temporal profile's file, once per start.
      taskQueue: options.taskQueue ?? jobTaskQueue(),
      workflowId: request.job_id,
      args: [request],
      ...startLinks(request, pipeline),
      // One job per business key, ever: a closed job is not re-run under the same id.
      workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
      workflowIdConflictPolicy: WorkflowIdConflictPolicy.FAIL,
      // The Web UI shows these as they are: the entry's text is the caller's, made readable.
      staticSummary: neutraliseBidi(`${request.job_id}: ${request.goal}`.slice(0, 200)),
      staticDetails: neutraliseBidi(
        [
          ...(pipeline
            ? [
                `**Entry** (${pipeline.entry}): ${JSON.stringify(requestEntry(request, pipeline.entrySpec)).slice(0, 300)}`,
              ]
            : []),
          ...(request.fork
            ? [`**Fork** of ${request.fork.of} from hop ${request.fork.hop}${request.fork.package ? ', edited' : ''}`]
            : []),
          `**Constraints**: ${request.constraints.join('; ') || 'none'}`,
          `**Budget**: $${request.budget.usd}, ${request.budget.revisions} revisions, max ${request.max_hops ?? DEFAULT_MAX_HOPS} hops`,
        ].join('\n\n'),
      ),
    });
    return { handle, created: true };
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) {
      return { handle: client.workflow.getHandle<typeof handoffJob>(request.job_id), created: false };
    }
    throw err;
  }
}

/** What a job starts with in visibility: its first search attributes, and for a fork the link to
 * its parent (`HandrailForkOf`, and the memo the Web UI shows). A fork's first hop is not its
 * pipeline's first route: it shows `running` and its pipeline until the rail publishes the rest. */
function startLinks(
  request: JobRequest,
  pipeline: Pipeline | undefined,
): { typedSearchAttributes?: SearchAttributePair[]; memo?: Record<string, unknown> } {
  const fork = request.fork;
  if (!fork) return pipeline ? { typedSearchAttributes: startSearchAttributes(request, pipeline) } : {};
  return {
    typedSearchAttributes: [
      { key: HandrailStatus, value: 'running' },
      { key: HandrailForkOf, value: fork.of },
      ...(pipeline ? [{ key: HandrailPipeline, value: pipeline.name }] : []),
    ],
    memo: {
      handrail_fork: { of: fork.of, hop: fork.hop, snapshot: fork.snapshot, edited: fork.package !== undefined },
    },
  };
}

/** The job's first attributes as the rail would publish them, for a start request; an empty list
 * is left out (an absent list is an empty one). None when the pipeline's first route cannot be
 * taken here: a `when` that asks the workflow API (`patched()`, docs/cluster.md) has its answer in
 * a worker only, and the rail publishes them at the first hop as it always could. */
export function startSearchAttributes(request: JobRequest, pipeline: Pipeline): SearchAttributePair[] {
  let attributes: JobAttributes;
  try {
    attributes = startingAttributes(request, pipeline);
  } catch (err) {
    if (err instanceof IllegalStateError) return [];
    throw err;
  }
  return jobSearchAttributes(attributes).filter(
    (a) => !Array.isArray(a.value) || a.value.length > 0,
  ) as SearchAttributePair[];
}

/** The result of a job, waiting for it to end. */
export function jobResult(client: Client, jobId: string): Promise<JobResult> {
  return client.workflow.getHandle<typeof handoffJob>(jobId).result();
}

/** The job a command named does not exist in this namespace. */
export class JobNotFoundError extends Error {
  override readonly name = 'JobNotFoundError';
  constructor(readonly jobId: string) {
    super(`no job "${jobId}" in this namespace`);
  }
}

/** A running job's state lives in its worker; without one polling, queries cannot be answered. */
export class NoWorkerAnsweredError extends Error {
  override readonly name = 'NoWorkerAnsweredError';
  constructor(
    readonly jobId: string,
    taskQueue: string,
  ) {
    super(
      `job "${jobId}" is running but no worker answered within ${QUERY_DEADLINE_MS / 1000} s on task queue "${taskQueue}"; start one with \`npm run worker\``,
    );
  }
}

/** The rail refused a decision (its validator's message) or the job is not in a state to take it. */
export class DecisionRefusedError extends Error {
  override readonly name: string = 'DecisionRefusedError';
}

/** The job ended before a decision reached it (before it was sent, or while it was on its way):
 * nothing to decide. A refusal like any other, so callers that handle DecisionRefusedError
 * handle it too. */
export class JobEndedError extends DecisionRefusedError {
  override readonly name = 'JobEndedError';
  constructor(
    readonly jobId: string,
    endedAs: string,
  ) {
    super(`job "${jobId}" already ended (${endedAs}); nothing to decide`);
  }
}

/** The job already ended, so it cannot be cancelled. */
export class JobClosedError extends Error {
  override readonly name = 'JobClosedError';
  constructor(
    readonly jobId: string,
    status: string,
  ) {
    super(`job "${jobId}" already ended (${status})`);
  }
}

const QUERY_DEADLINE_MS = 10_000;

/** How a run ended that the rail did not end itself (stopped from outside: terminated, timed
 * out; or failed), as Temporal says, lower-case. A terminated run runs no code, so its search
 * attributes keep what the rail last published; readers ask Temporal instead. */
export type EndedOutsideRail = 'terminated' | 'timed_out' | 'failed' | 'canceled';

/** A job's status as an operator reads it: the rail's view, or how Temporal ended the run. */
export type JobStatusShown = Omit<JobStatusView, 'status'> & { status: JobStatusView['status'] | EndedOutsideRail };

/** Everything an operator reads about one job. */
export interface JobView {
  status: JobStatusShown;
  package: HandoffV1;
  acks: AckRecord[];
  /** Temporal's own status of the run (RUNNING, COMPLETED, TERMINATED, ...). */
  run_status: string;
  task_queue: string;
  started_at: string;
  closed_at?: string;
  /** Present once the job returned. */
  result?: JobResult;
}

/** Temporal's description of the job's newest run (no worker asked); JobNotFoundError when it knows none. */
export async function describeJob(client: Client, jobId: string) {
  try {
    return await client.workflow.getHandle<typeof handoffJob>(jobId).describe();
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) throw new JobNotFoundError(jobId);
    throw err;
  }
}

/** How a closed job ended: the rail's own status when it returned one, else Temporal's — also
 * when the run was stopped from outside (terminated, timed out) while the rail said `running` or
 * `escalated`. */
function endedAs(described: Awaited<ReturnType<typeof describeJob>>): string {
  return shownStatus(described.typedSearchAttributes.get(HandrailStatus), described.status.name) ?? '';
}

/** The status a job shows: the rail's, unless the run closed while the rail said it was under way. */
function shownStatus(rail: string | undefined, runStatus: string): string | undefined {
  return runStatus === 'RUNNING' || (rail !== undefined && !OPEN_RAIL_STATUSES.has(rail))
    ? rail
    : runStatus.toLowerCase();
}

/** Rail statuses of a job still under way: a closed run that last said one of these was stopped from outside. */
const OPEN_RAIL_STATUSES: ReadonlySet<string> = new Set(['running', 'escalated']);

export type DescribedJob = Awaited<ReturnType<typeof describeJob>>;

/** What Temporal says about the run, as a JobView carries it. */
function runFacts(described: DescribedJob): Pick<JobView, 'run_status' | 'task_queue' | 'started_at' | 'closed_at'> {
  return {
    run_status: described.status.name,
    task_queue: described.taskQueue,
    started_at: described.startTime.toISOString(),
    ...(described.closeTime ? { closed_at: described.closeTime.toISOString() } : {}),
  };
}

/** Queries a running job: NoWorkerAnsweredError when no worker answers within the deadline. */
async function askWorker<T>(client: Client, jobId: string, taskQueue: string, ask: () => Promise<T>): Promise<T> {
  try {
    return await client.connection.withDeadline(Date.now() + QUERY_DEADLINE_MS, ask);
  } catch (err) {
    if (isGrpcDeadlineError(err)) throw new NoWorkerAnsweredError(jobId, taskQueue);
    throw err;
  }
}

/**
 * One job's status, package and acks. A job that returned is read from its result (no worker
 * needed); a running one is asked through the rail's queries.
 */
export async function getJob(client: Client, jobId: string): Promise<JobView> {
  return readJob(client, jobId, await describeJob(client, jobId));
}

/** `getJob` for a job Temporal has just described (a closed run is read without asking again). */
export async function readJob(client: Client, jobId: string, described: DescribedJob): Promise<JobView> {
  const handle = client.workflow.getHandle<typeof handoffJob>(jobId);
  const run = runFacts(described);
  if (described.status.name === 'COMPLETED') return completedJob(client, jobId, described);
  const view = await askWorker(client, jobId, described.taskQueue, async () => {
    // Each query sees the job at its own moment: asking for the status first means the acks
    // include at least every hop the status reflects (a follower never misses the last ones).
    const status = await handle.query(statusQuery);
    const [pkg, acks] = await Promise.all([handle.query(packageQuery), handle.query(acksQuery)]);
    // A run stopped from outside answers as it stood when stopped: it ended as Temporal says.
    if (described.status.name === 'RUNNING') return { ...run, status, package: pkg, acks };
    const { escalation: _open, ...ended } = status;
    return {
      ...run,
      status: { ...ended, status: described.status.name.toLowerCase() as EndedOutsideRail },
      package: pkg,
      acks,
    };
  });
  // The rail publishes its ending in the workflow task that closes the run: a query answered in
  // between says `completed` while the run is still open, with no result (and so no receipt).
  // Such a view is never given out: the run is read once it has closed, with its result.
  if (railEnded(view)) {
    const closed = await closedRun(client, jobId);
    if (closed.status.name !== 'RUNNING') return completedJob(client, jobId, closed);
  }
  return view;
}

/** The rail said the job ended, and Temporal still had the run open. */
export function railEnded(view: Pick<JobView, 'status' | 'run_status' | 'result'>): boolean {
  return view.run_status === 'RUNNING' && view.result === undefined && ENDED_RAIL_STATUSES.has(view.status.status);
}

const ENDED_RAIL_STATUSES: ReadonlySet<string> = new Set(['completed', 'rejected', 'cancelled']);

/** The run described once it has closed (it is closing: the rail returned). */
async function closedRun(client: Client, jobId: string): Promise<DescribedJob> {
  await client.connection.withDeadline(Date.now() + QUERY_DEADLINE_MS, () =>
    client.workflow
      .getHandle<typeof handoffJob>(jobId)
      .result()
      .catch(() => undefined),
  );
  return describeJob(client, jobId);
}

/** A run that closed Completed, read from its result (no worker needed); any other run as it stands. */
async function completedJob(client: Client, jobId: string, described: DescribedJob): Promise<JobView> {
  if (described.status.name !== 'COMPLETED') return readJob(client, jobId, described);
  const result = await client.workflow.getHandle<typeof handoffJob>(jobId).result();
  return {
    ...runFacts(described),
    status: statusFromResult(result, described.typedSearchAttributes.get(HandrailStage)),
    package: result.package,
    acks: result.acks,
    result,
  };
}

/** The status view of a job that returned, as its last `status` query would have answered. */
function statusFromResult(result: JobResult, stage: string | undefined): JobStatusView {
  const last = result.acks[result.acks.length - 1];
  return {
    job_id: result.job_id,
    status: result.status,
    stage: stage ?? last?.stage ?? 'intake',
    hops: result.hops,
    usd_remaining: result.package.budget.usd_remaining,
    revisions_remaining: result.package.budget.revisions_remaining,
    spent_usd: result.spent_usd,
    // An ended job holds no reservation.
    reserved_usd: 0,
    reservations: [],
    last_verdict: result.package.evaluator.last_verdict,
    ...(last ? { last_ack: last } : {}),
    ...(result.reason ? { reason: result.reason } : {}),
    ...(result.runs ? { runs: result.runs, earlier_acks: result.earlier_acks ?? {} } : {}),
  };
}

/** What changed since the previous poll of a followed job. */
export interface JobProgress {
  status: JobStatusShown;
  /** Acks recorded since the previous progress (on the first: all but the `seenAcks` oldest);
   * the newest is `status.last_ack`. */
  acks: AckRecord[];
}

/**
 * Follows a job hop by hop until it ends or waits for a human; yields whenever a new ack is
 * recorded or the status changes. Describes the job once (or not at all, following on from
 * `after`), then polls the rail's `status` query; the acks are asked for only when the status
 * moved, and the job is read in full once it stops (no history is read).
 */
export async function* watchJob(
  client: Client,
  jobId: string,
  opts: { pollMs?: number; seenAcks?: number; after?: JobView } = {},
): AsyncGenerator<JobProgress, JobView> {
  const handle = client.workflow.getHandle<typeof handoffJob>(jobId);
  let run: Pick<JobView, 'run_status' | 'task_queue' | 'started_at' | 'closed_at'>;
  // A job that already returned is its result: nothing to poll.
  let ended: JobView | undefined;
  if (opts.after) {
    const { status: _status, package: _pkg, acks: _acks, result: _result, ...facts } = opts.after;
    run = facts;
    if (opts.after.result) ended = opts.after;
  } else {
    const described = await describeJob(client, jobId);
    run = runFacts(described);
    if (described.status.name === 'COMPLETED') ended = await readJob(client, jobId, described);
  }
  const ask = <T>(query: () => Promise<T>) => askWorker(client, jobId, run.task_queue, query);
  let seen = opts.seenAcks ?? opts.after?.acks.length ?? 0;
  let acks: AckRecord[] = [];
  let lastStatus = '';
  let lastView = '';
  for (;;) {
    const status = ended?.status ?? (await ask(() => handle.query(statusQuery)));
    const view = JSON.stringify(status);
    // An unchanged status means no new ack: the status names the newest one.
    if (view !== lastView) {
      acks = ended?.acks ?? (await ask(() => handle.query(acksQuery)));
      // Acks newer than the status are held for the next poll, so each batch ends on the ack the
      // status describes (stage, verdict and wallet belong to it).
      const last = status.last_ack;
      const fromEnd = last
        ? [...acks]
            .reverse()
            .findIndex((a) => a.delivery_key === last.delivery_key && a.at === last.at && a.ack === last.ack)
        : -1;
      const fresh = acks.slice(seen, fromEnd >= 0 ? acks.length - fromEnd : acks.length);
      seen += fresh.length;
      if (fresh.length > 0 || status.status !== lastStatus) yield { status, acks: fresh };
      lastStatus = status.status;
      lastView = view;
    }
    if (ended) return ended;
    // Waiting for a human, the job still runs as described; an ended one is read once, for its result.
    if (status.status === 'escalated')
      return { ...run, status, package: await ask(() => handle.query(packageQuery)), acks };
    if (status.status !== 'running') return getJob(client, jobId);
    await new Promise((r) => setTimeout(r, opts.pollMs ?? 300));
  }
}

/** Sends a human decision to an escalated job; the rail's validator may refuse it. The same
 * `updateId` again answers with the first decision's receipt (Temporal deduplicates updates). */
export async function decide(
  client: Client,
  jobId: string,
  input: unknown,
  opts: { updateId?: string } = {},
): Promise<DecisionReceipt> {
  const parsed = HumanDecision.safeParse(input);
  if (!parsed.success) {
    throw new DecisionRefusedError(`invalid decision: ${issueLines(parsed.error, 'decision').join('; ')}`);
  }
  const described = await describeJob(client, jobId);
  if (described.status.name !== 'RUNNING') throw new JobEndedError(jobId, endedAs(described));
  try {
    return await client.workflow
      .getHandle<typeof handoffJob>(jobId)
      .executeUpdate(decideUpdate, { args: [parsed.data], ...(opts.updateId ? { updateId: opts.updateId } : {}) });
  } catch (err) {
    if (err instanceof WorkflowUpdateFailedError) throw new DecisionRefusedError(err.cause?.message ?? err.message);
    if (endedMeanwhile(err)) throw new JobEndedError(jobId, await howItEnded(client, jobId));
    throw err;
  }
}

/** gRPC statuses NOT_FOUND and ABORTED (grpc-js `status.NOT_FOUND`, `status.ABORTED`). */
const GRPC_NOT_FOUND = 5;
const GRPC_ABORTED = 10;

/** The job ended between the look at it and the request: Temporal answers NOT_FOUND ("workflow
 * execution already completed") or ABORTED ("update was aborted by closing workflow"). */
function endedMeanwhile(err: unknown): boolean {
  if (err instanceof WorkflowNotFoundError) return true;
  const code = err instanceof ServiceError ? (err.cause as { code?: unknown } | undefined)?.code : undefined;
  return code === GRPC_NOT_FOUND || code === GRPC_ABORTED;
}

async function howItEnded(client: Client, jobId: string): Promise<string> {
  try {
    return endedAs(await describeJob(client, jobId));
  } catch {
    return 'ended';
  }
}

/** Asks a running job to stop; the rail ends it as `cancelled` without writing. */
export async function cancelJob(client: Client, jobId: string): Promise<void> {
  const described = await describeJob(client, jobId);
  if (described.status.name !== 'RUNNING') throw new JobClosedError(jobId, endedAs(described));
  try {
    await client.workflow.getHandle(jobId).cancel();
  } catch (err) {
    if (endedMeanwhile(err)) throw new JobClosedError(jobId, await howItEnded(client, jobId));
    throw err;
  }
}

/** Filters on the rail's search attributes (workflows/search-attributes.ts); every one is optional. */
export interface JobFilter {
  status?: RailStatus;
  /** The pipeline the job runs (`HandrailPipeline`). */
  pipeline?: string;
  stage?: string;
  ack?: AckState;
  verdict?: LastVerdict;
  /** Only jobs started on this task queue (one deployment of handrail). */
  taskQueue?: string;
  limit?: number;
}

/** One row of `listJobs`, read from the search attributes (no worker needed). */
export interface JobListing {
  job_id: string;
  status: string;
  /** Empty for jobs started before the rail published it. */
  pipeline: string;
  stage: string;
  ack: string;
  verdict: string;
  hops: number | undefined;
  usd_remaining: number | undefined;
  run_status: string;
  started_at: string;
  closed_at?: string;
}

const quoted = (value: string) => `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;

/** The visibility query for a filter, as the Web UI's search box takes it too. */
export function jobsQuery(filter: Omit<JobFilter, 'limit'> = {}): string {
  const terms = [`WorkflowType = "handoffJob"`];
  if (filter.taskQueue) terms.push(`TaskQueue = ${quoted(filter.taskQueue)}`);
  if (filter.status) terms.push(`${HandrailStatus.name} = ${quoted(filter.status)}`);
  // A run closed while the rail said running or escalated (terminated, timed out) is neither.
  if (filter.status && OPEN_RAIL_STATUSES.has(filter.status)) terms.push(`ExecutionStatus = "Running"`);
  if (filter.pipeline) terms.push(`${HandrailPipeline.name} = ${quoted(filter.pipeline)}`);
  if (filter.stage) terms.push(`${HandrailStage.name} = ${quoted(filter.stage)}`);
  // Any ack the job has seen (HandrailAcks); jobs from before it was published match on the newest.
  if (filter.ack)
    terms.push(`(${HandrailAcks.name} = ${quoted(filter.ack)} OR ${HandrailAck.name} = ${quoted(filter.ack)})`);
  if (filter.verdict) terms.push(`${HandrailVerdict.name} = ${quoted(filter.verdict)}`);
  return terms.join(' AND ');
}

/** A visibility query narrowed to one deployment's task queue, so a namespace shared with other
 * workers yields only runs this deployment's workflow code is meant to replay. */
export function onTaskQueue(query: string, taskQueue: string): string {
  return `(${query}) AND TaskQueue = ${quoted(taskQueue)}`;
}

/** Jobs matching a filter, newest first (visibility is eventually consistent: a second or so behind). */
export async function listJobs(client: Client, filter: JobFilter = {}): Promise<JobListing[]> {
  const limit = filter.limit ?? 50;
  const jobs: JobListing[] = [];
  for await (const w of client.workflow.list({ query: jobsQuery(filter), pageSize: Math.min(limit, 100) })) {
    const attrs = w.typedSearchAttributes;
    jobs.push({
      job_id: w.workflowId,
      status: shownStatus(attrs.get(HandrailStatus), w.status.name) ?? '',
      pipeline: attrs.get(HandrailPipeline) ?? '',
      stage: attrs.get(HandrailStage) ?? '',
      ack: attrs.get(HandrailAck) ?? '',
      verdict: attrs.get(HandrailVerdict) ?? '',
      hops: attrs.get(HandrailHops),
      usd_remaining: attrs.get(HandrailUsdRemaining),
      run_status: w.status.name,
      started_at: w.startTime.toISOString(),
      ...(w.closeTime ? { closed_at: w.closeTime.toISOString() } : {}),
    });
    if (jobs.length >= limit) break;
  }
  return jobs;
}

/** A job's full event history (its latest run); JobNotFoundError for an unknown job. */
export async function fetchJobHistory(client: Client, jobId: string): Promise<History> {
  await describeJob(client, jobId);
  return client.workflow.getHandle(jobId).fetchHistory();
}

/** A job's full event history as JSON, the format `historyFromJSON` and replay tests read. */
export async function exportHistory(client: Client, jobId: string): Promise<string> {
  return historyToJSON(await fetchJobHistory(client, jobId));
}
