/**
 * Runs one `handrail` command against the configured Temporal server and returns the exit code.
 * Every command is a thin layer over the client API (src/operator/client.ts).
 */
import fs from 'node:fs';
import path from 'node:path';
import { isGrpcServiceError, type Client } from '@temporalio/client';
import { CodecConfigError, CodecKeyError } from '../../codec';
import { jobUrl, loadConfig, type HandrailConfig } from '../../config';
import { NamespaceNotFoundError, TemporalUnreachableError } from '../../connect';
import { openStore } from '../../worker/store';
import {
  DecisionRefusedError,
  InvalidJobRequestError,
  JobClosedError,
  JobNotFoundError,
  NoWorkerAnsweredError,
  cancelJob,
  connectHandrail,
  decide,
  exportHistory,
  getJob,
  jobResult,
  listJobs,
  onTaskQueue,
  startJob,
  watchJob,
  type JobView,
} from '../client';
import {
  DiffModuleError,
  HistoryFileError,
  bundleWorkflows,
  diffHistories,
  historyFileSource,
  loadDiffPipelines,
  jobSources,
  querySources,
  quietReplayRuntime,
  replayHistories,
  type ReplaySource,
} from '../../replay';
import { HopNotFoundError, hopSnapshots, snapshotText, type HopSnapshot } from '../snapshot';
import { ForkRefusedError, forkJob, type StartedFork } from '../fork';
import { jobSummary } from '../summary';
import {
  StageNotInTranscriptError,
  TranscriptUnreadableError,
  jobTranscript,
  transcriptOutput,
  type JobTranscript,
} from '../transcript';
import { BUILT_IN_PIPELINES } from '../../../contracts/pipelines';
import { BUILT_IN_DIFF, BUILT_IN_WORKFLOWS } from '../../pipelines';
import { InitError, initProject } from '../init';
import { HandoffsApiRequestError, HandoffsApiUnavailableError, handoffsClient } from '../handoffs';
import { HandrailPlugin } from '../../plugin';
import type { RunningServer } from '../../servers/api-main';
import {
  DETAILS,
  USAGE,
  UsageError,
  parseCommand,
  type Command,
  type HandoffsCommand,
  type ServeCommand,
} from './args';
import {
  diffLine,
  diffSummary,
  handoffText,
  handoffsText,
  jobText,
  listText,
  followLine,
  outcomeLine,
  progressLine,
  receiptText,
  replayLine,
  replaySummary,
  statusText,
  streamEventLine,
  terminalSafe,
  usd,
} from './format';
import { isTty, liveLine, paintFor } from './terminal';
import { followJob } from '../../stream/follow';
import { evalCommand } from './eval';
import { DatasetError } from '../../eval/dataset';
import { EvalModuleError } from '../../eval/build';
import { EvalSetupError } from '../../eval/run';
import { ScorerError } from '../../eval/scorers';
import { InvalidTicketFileError, jobRequestFromFile } from './ticket';

/** Exit codes scripts can branch on (documented in docs/operate.md and `--help`). */
export const EXIT = {
  ok: 0,
  failed: 1,
  usage: 2,
  notFound: 3,
  unreachable: 4,
  refused: 5,
  noWorker: 6,
  /** `--follow` stopped because the job waits for a human `decide`. */
  waitingForHuman: 10,
  /** `--follow` saw the job end other than completed (escalated, rejected, cancelled). */
  notCompleted: 11,
  /** `follow` stopped by Ctrl-C (the job runs on). */
  interrupted: 130,
} as const;

export interface CliIo {
  stdout: NodeJS.WriteStream | NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  stdin: NodeJS.ReadableStream;
  env: NodeJS.ProcessEnv;
}

const HELP = `handrail: start, follow, inspect, decide, cancel, list and export handrail jobs on Temporal, read their transcripts,
replay their histories against the current workflow code, and serve a project's pipelines over A2A and the records API.

${Object.values(USAGE)
  .map((u) => `  ${u}`)
  .join('\n')}

A ticket file is a raw ticket {id, customer_id, subject, body, channel?, received_at?} (the job id
defaults to the ticket id; goal, constraints and budget to the reference triage job) or a whole
job request {job_id, ticket, goal, constraints, budget, max_hops?}. "-" reads it from stdin.

Environment: TEMPORAL_ADDRESS (default localhost:7233), TEMPORAL_NAMESPACE (default),
HANDRAIL_TASK_QUEUE (handrail), HANDRAIL_WEB_UI_URL (http://localhost:8233). transcript reads
the store the worker writes: DATABASE_URL (PostgreSQL), else SQLite under HANDRAIL_DATA_DIR (.data).
handoffs calls the handoff records API: HANDRAIL_API_URL (http://127.0.0.1:8787) with the bearer
token in HANDRAIL_API_TOKEN, else the one \`npm run demo\` wrote to HANDRAIL_DATA_DIR/api-token.

replay reads history files (handrail history, temporal workflow show --output json, the Web UI's
download) without a server; --job and --query fetch from the server (--query only matches runs on
HANDRAIL_TASK_QUEUE). It bundles --workflows (default: handrail's workflows) once for all of them.
replay --diff runs each job's recorded packages through the current pipelines instead (--pipelines:
a module exporting pipelines and activities) and names the first hop whose ack, route, artifact or cost differs.

eval scores jobs (docs/eval.md): recorded histories as recorded (--replay: walked through the current
pipelines too) and fresh jobs from a JSONL dataset (--jobs), started through the current pipelines
(--pipelines: a module that also exports workflowsPath) on a dev server started for the run, or on
--address. --out writes the results with the build (git commit, pipeline digests). eval compare
prints a table per scorer and the moved jobs, --html writes an offline report, and it exits 1
when a --gate fails: 'pass_rate>=-2pt', 'cost_per_job<=+10%', 'completed>=0.95', 'moved_jobs<=0'.

serve runs one server in the foreground until Ctrl-C or SIGTERM, as npm run a2a|api|codec-server do.
a2a (HANDRAIL_A2A_PORT, 8788) and api (HANDRAIL_API_PORT, 8787) serve the pipelines of --plugin, a
module exporting the project's HandrailPlugin (e.g. ./dist/src/plugin.js; default: the built-in
pipelines), to the users of HANDRAIL_API_USERS or HANDRAIL_API_USERS_JSON; api opens the store.
codec serves the codec keys (HANDRAIL_CODEC_KEYS or _FILE) on HANDRAIL_CODEC_URL (docs/codec.md).

Exit codes: 0 ok · 1 failed, a transcript that fails verification, a history that fails replay, a job --diff finds different, or an eval gate that fails · 2 usage, invalid ticket, unknown namespace or codec keys ·
3 unknown job or record · 4 Temporal (or the API) unreachable · 5 refused (decision refused, job already ended,
record taken or final) · 6 no worker answered ·
10 --follow: waiting for a human · 11 --follow: ended other than completed`;

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
  return Buffer.concat(chunks).toString('utf8');
}

function readTicketFile(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (err) {
    // Node's EISDIR message names neither the path nor what to do.
    const why =
      (err as NodeJS.ErrnoException).code === 'EISDIR'
        ? 'it is a directory; give a ticket JSON file'
        : (err as Error).message;
    throw new UsageError(`cannot read ticket file ${file}: ${why}`);
  }
}

const line = (stream: NodeJS.WritableStream, text: string) => stream.write(`${text}\n`);
const printJson = (io: CliIo, value: unknown) => line(io.stdout, JSON.stringify(value, null, 2));

/** `--follow`: one line per hop; on a TTY a live line below them; JSON lines with --json.
 * Following on from `after` (read before a decision) shows only what came after it. */
async function follow(client: Client, jobId: string, io: CliIo, json: boolean, after?: JobView): Promise<number> {
  const live = liveLine(io.stdout, !json && isTty(io.stdout));
  const paint = paintFor(io.stdout, io.env);
  const started = Date.now();
  const progress = watchJob(client, jobId, after ? { after } : {});
  let final: JobView;
  for (;;) {
    const next = await progress.next();
    if (next.done) {
      final = next.value;
      break;
    }
    const { status, acks } = next.value;
    if (json) {
      line(io.stdout, JSON.stringify({ status, acks }));
      continue;
    }
    acks.forEach((ack, n) => live.print(progressLine(ack, n === acks.length - 1 ? status : undefined, paint)));
    live.show(followLine(status, Date.now() - started));
  }
  live.clear();
  if (!json) line(io.stdout, outcomeLine(final.status));
  if (final.status.status === 'completed') return EXIT.ok;
  return final.status.status === 'escalated' && final.run_status === 'RUNNING'
    ? EXIT.waitingForHuman
    : EXIT.notCompleted;
}

/** `handrail follow`: the job's stream from an event id, as lines (JSON lines with --json) and
 * the working stage's text as it comes, until the job ends; Ctrl-C stops following (the job runs
 * on) and leaves nothing running here. */
async function followStream(
  client: Client,
  config: HandrailConfig,
  jobId: string,
  from: number,
  io: CliIo,
  json: boolean,
): Promise<number> {
  const store = await openStore(config);
  const stop = new AbortController();
  const onInterrupt = () => stop.abort();
  process.once('SIGINT', onInterrupt);
  const paint = paintFor(io.stdout, io.env);
  let ended: string | undefined;
  let inText = false;
  try {
    for await (const item of followJob(client, jobId, { from, store, signal: stop.signal })) {
      if (json) {
        line(io.stdout, JSON.stringify(item.kind === 'event' ? item.event : { type: 'state', ...item.state }));
      } else if (item.kind === 'event') {
        const event = item.event;
        if (event.type === 'text_delta') {
          io.stdout.write(terminalSafe(event.delta));
          inText = true;
          continue;
        }
        const text = streamEventLine(event, paint);
        if (text === undefined) continue;
        if (inText) io.stdout.write('\n');
        inText = false;
        line(io.stdout, text);
      }
      if (item.kind === 'event' && item.event.type === 'job_finished') ended = item.event.status;
    }
  } finally {
    process.removeListener('SIGINT', onInterrupt);
    await store.close();
  }
  if (stop.signal.aborted) return EXIT.interrupted;
  return ended === 'completed' ? EXIT.ok : EXIT.notCompleted;
}

/** `handoffs`: the records API as the token's user; Temporal is the API's business. */
async function handoffs(command: HandoffsCommand, config: HandrailConfig, io: CliIo): Promise<number> {
  const api = handoffsClient(config, io.env);
  if (command.action === 'list') {
    // Without --project, every built-in pipeline's records, newest first.
    const projects = command.project ? [command.project] : BUILT_IN_PIPELINES.map((p) => p.name);
    const query = {
      ...(command.state ? { state: command.state } : {}),
      ...(command.limit ? { limit: command.limit } : {}),
    };
    const records = (await Promise.all(projects.map((p) => api.list(p, query))))
      .flat()
      .sort((a, b) => b.created_at.localeCompare(a.created_at))
      .slice(0, command.limit);
    if (command.json) printJson(io, records);
    else line(io.stdout, handoffsText(records));
    return EXIT.ok;
  }
  if (command.action === 'decide') {
    const { record, decision } = await api.decide(command.id, command.decision as Parameters<typeof api.decide>[1]);
    if (command.json) printJson(io, { record, decision });
    else line(io.stdout, receiptText(record.job_id, decision));
    return EXIT.ok;
  }
  const record = await api[command.action](command.id);
  if (command.json) printJson(io, record);
  else line(io.stdout, handoffText(record));
  return EXIT.ok;
}

async function execute(
  command: Exclude<Command, { name: 'help' | 'init' | 'handoffs' | 'serve' | 'replay' | 'eval' }>,
  client: Client,
  config: HandrailConfig,
  io: CliIo,
): Promise<number> {
  switch (command.name) {
    case 'start': {
      const source = command.ticket === '-' ? 'stdin' : command.ticket;
      const text = command.ticket === '-' ? await readAll(io.stdin) : readTicketFile(command.ticket);
      const request = jobRequestFromFile(text, source, command.flags);
      // The CLI has no plugin: it starts with the built-in pipelines its ticket files are checked
      // against (jobRequestFromFile), so a job shows its first search attributes from its start, as
      // one started by a client that knows the pipelines, and the rail's first hop upserts none.
      const { created } = await startJob(client, request, {
        taskQueue: config.taskQueue,
        pipelines: BUILT_IN_PIPELINES,
      });
      const url = jobUrl(config, request.job_id);
      if (command.json)
        line(io.stdout, JSON.stringify({ job_id: request.job_id, created, task_queue: config.taskQueue, url }));
      else
        line(
          io.stdout,
          `${created ? 'Started' : 'Attached to existing'} job ${request.job_id} on task queue ${config.taskQueue} (budget ${usd(request.budget.usd)}, revisions ${request.budget.revisions})\nWeb UI: ${url}`,
        );
      return command.follow ? follow(client, request.job_id, io, command.json) : EXIT.ok;
    }
    case 'fork': {
      const edited = command.packageFile === undefined ? undefined : readPackageFile(command.packageFile);
      const store = await openStore(config);
      let started: StartedFork;
      try {
        started = await forkJob(client, store, command.jobId, command.fromHop, {
          ...config,
          ...(command.forkId ? { jobId: command.forkId } : {}),
          ...(command.pipeline ? { pipeline: command.pipeline } : {}),
          ...(edited === undefined ? {} : { package: edited }),
        });
      } finally {
        await store.close();
      }
      const jobId = started.request.job_id;
      const url = jobUrl(config, jobId);
      if (command.json)
        line(
          io.stdout,
          JSON.stringify({
            job_id: jobId,
            fork_of: command.jobId,
            hop: command.fromHop,
            created: started.created,
            url,
          }),
        );
      else
        line(
          io.stdout,
          `${started.created ? 'Started' : 'Attached to existing'} fork ${jobId} of ${command.jobId} from hop ${command.fromHop}${edited === undefined ? '' : ' (edited)'} (wallet ${usd(started.request.budget.usd)}, revisions ${started.request.budget.revisions})\nWeb UI: ${url}`,
        );
      return command.follow ? follow(client, jobId, io, command.json) : EXIT.ok;
    }
    case 'follow':
      return followStream(client, config, command.jobId, command.from, io, command.json);
    case 'status': {
      const view = await getJob(client, command.jobId);
      if (command.json) printJson(io, view.status);
      else line(io.stdout, statusText(view.status));
      return EXIT.ok;
    }
    case 'show': {
      if (command.hop !== undefined) {
        const store = await openStore(config);
        let snapshots: HopSnapshot[];
        try {
          snapshots = await hopSnapshots(client, store, command.jobId, command.hop);
        } finally {
          await store.close();
        }
        if (command.json) printJson(io, snapshots);
        else line(io.stdout, snapshotText(snapshots));
        return EXIT.ok;
      }
      const view = await getJob(client, command.jobId);
      const summary = await jobSummary(view.package.summary, () => openStore(config));
      if (command.json)
        printJson(io, {
          ...view,
          summary_segments: summary.segments,
          ...(summary.unreadable ? { summary_unreadable: summary.unreadable } : {}),
        });
      else line(io.stdout, jobText(view, jobUrl(config, command.jobId), summary, paintFor(io.stdout, io.env)));
      return EXIT.ok;
    }
    case 'list': {
      const jobs = await listJobs(client, { ...command.filter, taskQueue: config.taskQueue });
      if (command.json) printJson(io, jobs);
      else line(io.stdout, listText(jobs, paintFor(io.stdout, io.env)));
      return EXIT.ok;
    }
    case 'decide': {
      // Following after a decision shows what the decision caused, not the hops before it.
      const before = command.follow ? await getJob(client, command.jobId) : undefined;
      const receipt = await decide(client, command.jobId, command.decision);
      if (command.json) line(io.stdout, JSON.stringify(receipt));
      else line(io.stdout, receiptText(command.jobId, receipt));
      return before ? follow(client, command.jobId, io, command.json, before) : EXIT.ok;
    }
    case 'cancel': {
      await cancelJob(client, command.jobId);
      // The rail ends a cancelled job within a workflow task; wait briefly to report the outcome.
      const ended = await Promise.race([
        jobResult(client, command.jobId),
        new Promise<undefined>((r) => setTimeout(() => r(undefined), 10_000).unref()),
      ]);
      if (command.json)
        line(
          io.stdout,
          JSON.stringify({ job_id: command.jobId, cancel_requested: true, status: ended?.status ?? 'cancelling' }),
        );
      else
        line(
          io.stdout,
          ended
            ? `${command.jobId} ${ended.status}`
            : `${command.jobId}: cancellation requested; the job ends when its worker next runs it`,
        );
      return EXIT.ok;
    }
    case 'history': {
      const history = await exportHistory(client, command.jobId);
      if (!command.out) {
        line(io.stdout, history);
        return EXIT.ok;
      }
      fs.writeFileSync(command.out, history);
      const events = (JSON.parse(history) as { events?: unknown[] }).events?.length ?? 0;
      if (command.json) line(io.stdout, JSON.stringify({ job_id: command.jobId, out: command.out, events }));
      else line(io.stdout, `wrote ${events} events of ${command.jobId} to ${command.out}`);
      return EXIT.ok;
    }
    case 'transcript': {
      const store = await openStore(config);
      let transcript: JobTranscript;
      try {
        transcript = await jobTranscript(client, store, command.jobId);
      } finally {
        await store.close();
      }
      line(io.stdout, transcriptOutput(transcript, command));
      return EXIT.ok;
    }
  }
}

/** On a TTY, a fleet check this large shows a live count below the per-history lines. */
const MANY_HISTORIES = 10;

/** gRPC status INVALID_ARGUMENT (grpc-js `status.INVALID_ARGUMENT`): the server could not parse a visibility query. */
const GRPC_INVALID_ARGUMENT = 3;

/** How many runs a query matches; a query the server refuses is the operator's to fix (a usage error). */
async function countRuns(client: Client, query: string): Promise<number> {
  try {
    return (await client.workflow.count(query)).count;
  } catch (err) {
    const cause = err instanceof Error ? err.cause : undefined;
    if (isGrpcServiceError(cause) && cause.code === GRPC_INVALID_ARGUMENT)
      throw new UsageError(`--query is not a visibility query the server accepts: ${cause.details}`);
    throw err;
  }
}

/**
 * `replay`: files are read first (a bad one fails before the seconds-long bundle), the code is
 * bundled once, and histories from the server stream into the replay as they are fetched.
 */
async function replay(
  command: Extract<Command, { name: 'replay' }>,
  connect: () => Promise<Client>,
  config: HandrailConfig,
  io: CliIo,
): Promise<number> {
  const files = command.files.map(historyFileSource);
  const client = command.jobs.length > 0 || command.query ? await connect() : undefined;
  const query = command.query && onTaskQueue(command.query, config.taskQueue);
  const total = files.length + command.jobs.length + (client && query ? await countRuns(client, query) : 0);
  async function* sources(): AsyncGenerator<ReplaySource> {
    yield* files;
    if (!client) return;
    yield* jobSources(client, command.jobs);
    if (query) yield* querySources(client, query);
  }
  const live = liveLine(io.stdout, !command.json && total >= MANY_HISTORIES && isTty(io.stdout));
  /** Prints each report as it comes, with a live count below on a terminal (cleared at the end). */
  async function report<T>(items: AsyncIterable<T>, text: (item: T) => string, verb: string): Promise<T[]> {
    const all: T[] = [];
    for await (const item of items) {
      all.push(item);
      if (command.json) continue;
      live.print(text(item));
      live.show(`… ${verb} ${all.length} of ${Math.max(total, all.length)}`);
    }
    live.clear();
    return all;
  }
  if (command.diff) {
    const pipelines = command.pipelines === undefined ? undefined : await diffPipelines(command.pipelines);
    const diffs = await report(diffHistories(sources(), { pipelines: pipelines ?? BUILT_IN_DIFF }), diffLine, 'diffed');
    const differ = diffs.filter((d) => d.first).length;
    const skipped = diffs.filter((d) => !d.pipeline).length;
    if (command.json)
      printJson(io, { diffed: diffs.length, same: diffs.length - differ - skipped, differ, skipped, jobs: diffs });
    else line(io.stdout, diffSummary(diffs));
    return differ > 0 ? EXIT.failed : EXIT.ok;
  }
  const workflowsPath = command.workflows && path.resolve(command.workflows);
  if (workflowsPath && !fs.existsSync(workflowsPath))
    throw new UsageError(`--workflows ${command.workflows}: no such file (give the workflow module your worker runs)`);
  quietReplayRuntime();
  live.show(`… bundling the workflow code to replay ${total} histories`);
  const workflowBundle = workflowsPath
    ? await bundleWorkflows(workflowsPath)
    : await bundleWorkflows(BUILT_IN_WORKFLOWS.workflowsPath, BUILT_IN_WORKFLOWS.preloadModules);
  const outcomes = await report(replayHistories(sources(), { workflowBundle }), replayLine, 'replayed');
  const failed = outcomes.filter((o) => !o.ok);
  if (command.json)
    printJson(io, {
      replayed: outcomes.length,
      passed: outcomes.length - failed.length,
      failed: failed.length,
      histories: outcomes,
    });
  else line(io.stdout, replaySummary(outcomes));
  return failed.length > 0 ? EXIT.failed : EXIT.ok;
}

/** `--pipelines PATH`: a missing or malformed module is a usage error, named. */
async function diffPipelines(modulePath: string) {
  if (!fs.existsSync(path.resolve(modulePath)))
    throw new UsageError(
      `--pipelines ${modulePath}: no such file (give a module exporting \`pipelines\` and \`activities\`)`,
    );
  return loadDiffPipelines(modulePath);
}

/** `--plugin PATH` cannot be loaded or exports no `HandrailPlugin`. */
class PluginModuleError extends Error {
  override readonly name = 'PluginModuleError';
}

/** A server `serve` runs that could not start (a port in use, no API users): its message, no stack. */
class ServerStartError extends Error {
  override readonly name = 'ServerStartError';
}

/** A HandrailPlugin, also one of another copy of handrail than the CLI's (a project's plugin
 * imports the installed package; `npm run cli` runs from the sources). */
function isHandrailPlugin(value: unknown): value is HandrailPlugin {
  if (value instanceof HandrailPlugin) return true;
  const plugin = value as Partial<HandrailPlugin> | null;
  return typeof plugin === 'object' && plugin !== null && plugin.name === 'handrail' && Array.isArray(plugin.pipelines);
}

/**
 * `--plugin PATH`: the project's module exporting its HandrailPlugin (`src/plugin.ts` of a
 * `handrail init` project, built: `./dist/src/plugin.js`), found and imported as `--pipelines`
 * modules are (`loadDiffPipelines`): a path from the current folder. Any one export may be it.
 */
async function loadPlugin(modulePath: string): Promise<HandrailPlugin> {
  if (!fs.existsSync(path.resolve(modulePath)))
    throw new UsageError(`--plugin ${modulePath}: no such file (give the built module exporting your HandrailPlugin)`);
  let loaded: Record<string, unknown>;
  try {
    loaded = (await import(path.resolve(modulePath))) as Record<string, unknown>;
  } catch (err) {
    throw new PluginModuleError(`--plugin ${modulePath}: ${(err as Error).message}`);
  }
  // A CommonJS module's exports are also its namespace's `default`.
  const exported = [...Object.values(loaded), ...Object.values((loaded.default ?? {}) as object)];
  const plugins = [...new Set(exported.filter(isHandrailPlugin))];
  if (plugins.length !== 1)
    throw new PluginModuleError(
      plugins.length === 0
        ? `--plugin ${modulePath} exports no HandrailPlugin (export the one your worker runs: \`export const handrail = new HandrailPlugin({ pipelines, … })\`)`
        : `--plugin ${modulePath} exports ${plugins.length} HandrailPlugins: export the one to serve`,
    );
  return plugins[0]!;
}

/**
 * `handrail serve`: the server `npm run a2a|api|codec-server` runs (the same function), serving
 * the plugin's pipelines. A start that fails exits with the error's code (4 Temporal unreachable,
 * 2 an unknown namespace or bad codec keys, else 1 with its message). Once it listens, the process
 * is the server's until SIGINT/SIGTERM, which close it and exit 0 (src/servers/process.ts): the
 * returned promise never settles.
 */
async function serve(command: ServeCommand, io: CliIo): Promise<number> {
  const plugin = command.plugin === undefined ? undefined : await loadPlugin(command.plugin);
  // Loaded here, not with the CLI: the other commands need no Fastify.
  const servers = await import('../../servers');
  const options = { env: io.env, log: (text: string) => line(io.stdout, text), ...(plugin ? { plugin } : {}) };
  let server: RunningServer;
  try {
    server = await (command.server === 'a2a'
      ? servers.serveA2a(options)
      : command.server === 'api'
        ? servers.serveHandoffsApi(options)
        : servers.serveCodecServer(options));
  } catch (err) {
    if (exitCodeFor(err) !== EXIT.failed) throw err;
    throw new ServerStartError(`serve ${command.server}: ${err instanceof Error ? err.message : String(err)}`);
  }
  servers.runServerProcess(async () => server);
  return new Promise<number>(() => {});
}

/** `--package FILE` is not a JSON file. */
class PackageFileError extends Error {
  override readonly name = 'PackageFileError';
}

/** The edited package a fork starts from; the rail validates it (and acks it) like any delivery. */
function readPackageFile(file: string): unknown {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as unknown;
  } catch (err) {
    throw new PackageFileError(`--package ${file}: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** Errors an operator can act on get their message and a distinct code; anything else is a bug report. */
function exitCodeFor(err: unknown): number {
  if (err instanceof InitError) return EXIT.usage;
  if (
    err instanceof UsageError ||
    err instanceof HistoryFileError ||
    err instanceof DiffModuleError ||
    err instanceof DatasetError ||
    err instanceof EvalModuleError ||
    // A scorer or module of the user's that cannot run is theirs to fix, not a failed gate (exit 1).
    err instanceof EvalSetupError ||
    err instanceof ScorerError ||
    err instanceof InvalidTicketFileError ||
    err instanceof InvalidJobRequestError ||
    err instanceof StageNotInTranscriptError ||
    err instanceof HopNotFoundError ||
    err instanceof ForkRefusedError ||
    err instanceof PackageFileError ||
    err instanceof PluginModuleError
  )
    return EXIT.usage;
  // A wrong TEMPORAL_NAMESPACE or codec key is a setting to fix, not a server to start: not exit 4.
  if (err instanceof NamespaceNotFoundError || err instanceof CodecConfigError || err instanceof CodecKeyError)
    return EXIT.usage;
  if (err instanceof JobNotFoundError) return EXIT.notFound;
  if (err instanceof TemporalUnreachableError) return EXIT.unreachable;
  if (err instanceof DecisionRefusedError || err instanceof JobClosedError) return EXIT.refused;
  if (err instanceof NoWorkerAnsweredError) return EXIT.noWorker;
  if (err instanceof HandoffsApiUnavailableError) return EXIT.unreachable;
  if (err instanceof HandoffsApiRequestError)
    return err.status === 404
      ? EXIT.notFound
      : err.status === 409
        ? EXIT.refused
        : err.status === 401
          ? EXIT.usage
          : EXIT.failed;
  if (err instanceof Error && 'code' in err && err.code === 'ENOENT') return EXIT.usage;
  return EXIT.failed;
}

/** `handrail init`: the project, and what to run next. */
function initCommand(command: Extract<Command, { name: 'init' }>, io: CliIo): number {
  const made = initProject(command.dir, command.handrail === undefined ? {} : { handrail: command.handrail });
  line(
    io.stdout,
    `Created ${path.relative(process.cwd(), made.dir) || '.'} (${made.files.length} files; handrail ${made.handrail}). Next:`,
  );
  line(
    io.stdout,
    `  cd ${command.dir}\n  npm install\n  npm test        # a job of its own pipeline on a dev server of its own`,
  );
  line(io.stdout, 'Then read README.md there: run a worker against your Temporal server, start jobs, open the Web UI.');
  return EXIT.ok;
}

export async function runCli(argv: string[], io: CliIo): Promise<number> {
  let client: Client | undefined;
  try {
    const command = parseCommand(argv);
    if (command.name === 'help') {
      line(
        io.stdout,
        command.topic && command.topic in USAGE
          ? `usage: ${USAGE[command.topic as keyof typeof USAGE]}${DETAILS[command.topic as keyof typeof USAGE] ? `\n\n${DETAILS[command.topic as keyof typeof USAGE]}` : ''}`
          : HELP,
      );
      return EXIT.ok;
    }
    if (command.name === 'init') return initCommand(command, io);
    if (command.name === 'serve') return await serve(command, io);
    const config = loadConfig(io.env);
    if (command.name === 'handoffs') return await handoffs(command, config, io);
    // Only what needs the server connects: replaying files works offline.
    const connect = async () => (client ??= await connectHandrail(config));
    if (command.name === 'replay') return await replay(command, connect, config, io);
    if (command.name === 'eval') return await evalCommand(command, connect, config, io);
    return await execute(command, await connect(), config, io);
  } catch (err) {
    const code = exitCodeFor(err);
    // A transcript failing verification is a finding about the store, not a bug in the CLI.
    const stack =
      code === EXIT.failed && !(err instanceof TranscriptUnreadableError || err instanceof ServerStartError);
    line(
      io.stderr,
      `handrail: ${err instanceof Error ? (stack ? (err.stack ?? err.message) : err.message) : String(err)}`,
    );
    return code;
  } finally {
    await client?.connection.close();
  }
}
