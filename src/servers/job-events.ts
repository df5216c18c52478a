/**
 * `GET /jobs/{id}/events` (and `POST`, what an `@ag-ui/client` HttpAgent sends): a job's stream as
 * AG-UI events over Server-Sent Events, resumable with `Last-Event-ID`. The records API's bearer
 * tokens and owner scope: a job owned by someone else, of a pipeline this server does not serve,
 * or that does not exist is the same 404. A follower that does not read is sent
 * `handrail.stream_lagged` once its buffer is full and closed, so it resumes from its last id.
 */
import { EventEncoder } from '@ag-ui/encoder';
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { decodeArrayFromPayloads } from '@temporalio/common/lib/internal-non-workflow';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { JobRequest } from '../../contracts';
import { HandrailPipeline } from '../../workflows/search-attributes';
import { AgUiConnection, type AgUiOut } from '../stream/ag-ui';
import { JobFeeds } from '../stream/feeds';
import type { StreamStore } from '../worker/store/types';
import type { ApiUser } from './api-users';
import { ApiError } from './handoffs-api';

/** What a follower may leave unread before it is closed with `stream_lagged` (bytes). */
export const FOLLOWER_BUFFER_BYTES = 1024 * 1024;

export interface JobEventsOptions {
  temporal: Client;
  store: StreamStore;
  /** Whether this server serves jobs of the pipeline (a project of its workspace). */
  servesPipeline: (pipeline: string) => boolean;
  caller: (request: FastifyRequest) => ApiUser;
  /** Bytes a follower's connection may leave unsent before it is dropped as lagged. */
  bufferBytes?: number;
  /** Events a follower may leave untaken before it is dropped as lagged (JobFeeds). */
  queueLimit?: number;
}

/** A `Last-Event-ID` (or `?after=`): absent is 0, from the first; anything but a whole number is 400. */
export function parseLastEventId(raw: string | string[] | undefined): number {
  if (raw === undefined || raw === '') return 0;
  const text = Array.isArray(raw) ? raw[0]! : raw;
  if (!/^\d{1,15}$/.test(text))
    throw new ApiError(
      400,
      'invalid_last_event_id',
      `Last-Event-ID must be an event id this stream sent (a whole number), not ${JSON.stringify(text.slice(0, 40))}`,
    );
  return Number(text);
}

/** The job's owner and pipeline, from the request that started it (its first history event). */
async function jobScope(temporal: Client, jobId: string): Promise<{ owner?: string; pipeline?: string } | undefined> {
  try {
    const res = await temporal.workflowService.getWorkflowExecutionHistory({
      namespace: temporal.options.namespace,
      execution: { workflowId: jobId },
      maximumPageSize: 1,
    });
    const started = res.history?.events?.[0]?.workflowExecutionStartedEventAttributes;
    if (!started || started.workflowType?.name !== 'handoffJob') return undefined;
    const [request] = (await decodeArrayFromPayloads(
      temporal.workflow.options.loadedDataConverter,
      started.input?.payloads,
    )) as [JobRequest | undefined];
    // A request without `pipeline` runs the worker's first: the rail publishes which.
    const pipeline =
      request?.pipeline ??
      (await temporal.workflow.getHandle(jobId).describe()).typedSearchAttributes.get(HandrailPipeline);
    return { ...(request?.owner ? { owner: request.owner } : {}), ...(pipeline ? { pipeline } : {}) };
  } catch (err) {
    if (err instanceof WorkflowNotFoundError || (err as { code?: number }).code === 5) return undefined;
    throw err;
  }
}

/** Resolves when the response can take more, or the follower went. */
function drained(raw: NodeJS.WritableStream, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      raw.removeListener('drain', done);
      signal.removeEventListener('abort', done);
      resolve();
    };
    raw.once('drain', done);
    signal.addEventListener('abort', done, { once: true });
  });
}

/** How often a server removes model text past its retention while it serves followers. */
const PRUNE_EVERY_MS = 60_000;

export function registerJobEvents(app: FastifyInstance, options: JobEventsOptions): void {
  let pruned = 0;
  const feeds = new JobFeeds(options.temporal, options.store, {
    ...(options.queueLimit !== undefined ? { queueLimit: options.queueLimit } : {}),
  });
  // The streams open now: a server that stops ends them first (its followers resume elsewhere
  // with their last id), or closing would wait on them for as long as their jobs run.
  const open = new Set<AbortController>();
  app.addHook('preClose', async () => {
    for (const stream of open) stream.abort();
  });
  const handler = async (request: FastifyRequest, reply: FastifyReply) => {
    const user = options.caller(request);
    if (Date.now() - pruned > PRUNE_EVERY_MS) {
      pruned = Date.now();
      void options.store.pruneStreamEntries(new Date()).catch((err: unknown) => request.log.warn(err));
    }
    const { id } = request.params as { id: string };
    const query = request.query as { after?: string };
    const from = parseLastEventId(request.headers['last-event-id'] ?? query.after);
    const scope = await jobScope(options.temporal, id);
    const visible =
      scope !== undefined &&
      (scope.owner === undefined || user.role === 'root' || scope.owner === user.name) &&
      // A job whose request named no pipeline runs the workers' first one, which the rail
      // publishes at its first hop: until then it is taken to be one this server serves.
      (scope.pipeline === undefined || options.servesPipeline(scope.pipeline));
    if (!visible) throw new ApiError(404, 'not_found', `no job ${id}`);
    const stream = new AbortController();
    open.add(stream);
    try {
      await streamJob(request, reply, options, feeds, id, from, stream);
    } finally {
      open.delete(stream);
    }
  };
  app.get('/jobs/:id/events', handler);
  app.post('/jobs/:id/events', handler);
}

async function streamJob(
  request: FastifyRequest,
  reply: FastifyReply,
  options: JobEventsOptions,
  feeds: JobFeeds,
  jobId: string,
  from: number,
  abort: AbortController,
): Promise<void> {
  const encoder = new EventEncoder();
  const raw = reply.raw;
  reply.hijack();
  raw.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache, no-transform',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  });
  // The response closes when the follower goes (or once it ended): the feed lets go of it.
  raw.on('close', () => abort.abort());
  // Gone already (while its job was looked up): nothing to follow for.
  if (raw.destroyed) abort.abort();
  const limit = options.bufferBytes ?? FOLLOWER_BUFFER_BYTES;
  const agui = new AgUiConnection(jobId);
  const send = (out: AgUiOut) =>
    raw.write(`${out.id !== undefined ? `id: ${out.id}\n` : ''}${encoder.encodeSSE(out.event)}`);
  try {
    for (const out of agui.opening()) send(out);
    for await (const item of feeds.follow(jobId, from, abort.signal)) {
      if (item.kind !== 'lagged') for (const out of agui.translate(item)) send(out);
      if (item.kind === 'lagged' || raw.writableLength > limit) {
        send(agui.custom('stream_lagged', { message: 'the follower read too slowly: resume from the last event id' }));
        break;
      }
      // A follower that reads slowly holds the loop here; the feed queues for it, up to its limit.
      if (raw.writableNeedDrain) await drained(raw, abort.signal);
    }
  } catch (err) {
    if (!abort.signal.aborted)
      send(agui.custom('stream_error', { message: `the stream stopped: ${(err as Error).message.slice(0, 200)}` }));
  } finally {
    abort.abort();
    raw.end();
  }
}
