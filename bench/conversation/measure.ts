/**
 * Conversation size vs history (issue "Handover"): one job with a 10 KB and one with a 1 MB
 * conversation through the bench's `talk → read` pipeline (the edge hands `read` a trace file).
 * The conversation lives in the store; the package, and so the history, carries only its URI.
 * The 10 KB job is the baseline: the two histories should differ by no more than a reference.
 */
import { HandrailPlugin } from '../../src/plugin';
import fs from 'node:fs';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { NativeConnection, type Worker } from '@temporalio/worker';
import { temporal } from '@temporalio/proto';
import { isTranscriptUri, messageText, USER_AGENT_ID } from '../../contracts';
import { logMessages, readLog } from '../../activities/transcript-log';
import { startJob } from '../../src/operator/client';
import { sampleJobRequest } from '../../src/devtools/samples/tickets';
import { openStore, type Store } from '../../src/worker/store';
import { createHandrailWorkers, runWorkers } from '../../src/worker/worker';
import { encodedHistory, fetchHistories, type History } from '../history';
import { NAMESPACE, newTraceparent, runId, type Lab } from '../lab';
import { markdownTable } from '../report';
import { conversationActivities, sizeLine } from './activities';
import { conversationBench } from './pipeline';
import { bundleRail } from '../../src/worker/bundle';

export const CONVERSATION_SIZES = [10 * 1024, 1024 * 1024] as const;

export interface ConversationJob {
  job_id: string;
  conversation_bytes_requested: number;
  history_bytes: number;
  /** The same history with every timestamp's nanos set to 0: the clock's share taken out. */
  history_bytes_nanos_zeroed: number;
  history_events: number;
  /** UTF-8 bytes of the text of every message in the job's log (both stages' turns). */
  conversation_bytes_in_store: number;
  log_messages: number;
  transcript_uri: string;
  /** Blocks of the trace `read` was handed that went to files of their own. */
  trace_blocks_offloaded: number;
  transcript_uri_in_history: boolean;
  conversation_in_history: boolean;
}

export interface ConversationFigures {
  jobs: ConversationJob[];
  /** History bytes of the 1 MB job less the 10 KB job's. */
  history_bytes_difference: number;
  history_bytes_nanos_zeroed_difference: number;
  /** Length of the transcript URI the package carries. */
  reference_bytes: number;
  /** History bytes 1 MB / 10 KB. */
  history_bytes_ratio: number;
}

const label = (bytes: number) => (bytes >= 2 ** 20 ? `${bytes / 2 ** 20} MB` : `${bytes / 1024} KB`);

/** Runs one job per size on an in-process worker (bytes are measured here, not CPU). */
export async function conversationVsHistory(
  lab: Pick<Lab, 'address' | 'tmp' | 'client'>,
): Promise<ConversationFigures> {
  const dir = fs.mkdtempSync(path.join(lab.tmp, 'conversation-'));
  const workspace = path.join(dir, 'workspace');
  fs.mkdirSync(workspace);
  const { code } = await bundleRail(path.join(__dirname, 'workflows.ts'));
  const connection = await NativeConnection.connect({ address: lab.address });
  const store = await openStore({ dataDir: dir, databaseUrl: undefined });
  const taskQueue = `bench-conversation-${runId()}`;
  let workers: Worker[] = [];
  let running: Promise<void> | undefined;
  try {
    workers = await createHandrailWorkers({
      connection,
      plugin: new HandrailPlugin({ pipelines: [conversationBench], activities: conversationActivities }),
      config: { namespace: NAMESPACE, taskQueue },
      store,
      workflowBundle: { code },
      workspace,
    });
    running = runWorkers(workers);
    // One run id for both jobs: their ids differ only in the seven-digit size.
    const id = runId();
    const jobs: ConversationJob[] = [];
    for (const bytes of CONVERSATION_SIZES)
      jobs.push(
        await measureJob(lab.client, store, taskQueue, `conversation-${id}-${String(bytes).padStart(7, '0')}`, bytes),
      );
    const [small, large] = jobs as [ConversationJob, ConversationJob];
    return {
      jobs,
      history_bytes_difference: large.history_bytes - small.history_bytes,
      history_bytes_nanos_zeroed_difference: large.history_bytes_nanos_zeroed - small.history_bytes_nanos_zeroed,
      reference_bytes: small.transcript_uri.length,
      history_bytes_ratio: large.history_bytes / small.history_bytes,
    };
  } finally {
    for (const w of workers) w.shutdown();
    await running;
    await store.close();
    await connection.close();
  }
}

async function measureJob(
  client: Client,
  store: Store,
  taskQueue: string,
  jobId: string,
  bytes: number,
): Promise<ConversationJob> {
  const request = {
    ...sampleJobRequest(jobId),
    pipeline: conversationBench.name,
    ticket: {
      id: 'tkt_conversation',
      customer_id: 'cus_9',
      subject: 'Hand the whole conversation over',
      body: sizeLine(bytes),
    },
    traceparent: newTraceparent(),
  };
  const { handle } = await startJob(client, request, { taskQueue });
  const result = await handle.result();
  if (result.status !== 'completed') throw new Error(`${jobId} ended ${result.status}: ${result.reason ?? ''}`);
  const [history] = await fetchHistories(client, [jobId]);
  const { bytes: historyBytes, text } = encodedHistory(history!);

  const log = await readLog(store, result.package, jobId);
  const messages = logMessages(log);
  const said = log.turns
    .find((t) => t.stage === 'talk')!
    .messages.filter((m) => m.agent_id !== USER_AGENT_ID)
    .map((m) => messageText(m.message));
  // A piece from the start, middle and end of each of talk's messages.
  const pieces = said.flatMap((s) => [s.slice(0, 40), s.slice(s.length / 2, s.length / 2 + 40), s.slice(-40)]);
  const handedOver = log.turns.find((t) => t.stage === 'read')?.handover?.question_text ?? '';
  const trace = /Trace file path: (\S+)/.exec(handedOver)?.[1];
  const uri = result.package.memory_refs.find(isTranscriptUri)!;
  return {
    job_id: jobId,
    conversation_bytes_requested: bytes,
    history_bytes: historyBytes,
    history_bytes_nanos_zeroed: bytesNanosZeroed(history!),
    history_events: history!.events?.length ?? 0,
    conversation_bytes_in_store: messages.reduce((n, m) => n + Buffer.byteLength(messageText(m.message)), 0),
    log_messages: messages.length,
    transcript_uri: uri,
    trace_blocks_offloaded: trace ? (fs.readFileSync(trace, 'utf8').match(/offloaded="true"/g)?.length ?? 0) : 0,
    transcript_uri_in_history: text.includes(uri),
    conversation_in_history: pieces.some((p) => text.includes(p)),
  };
}

/** A protobuf Timestamp's nanos is a varint (4 bytes below 0.268 s into the second, 5 above), so
 * every event time may move a history's size by a byte; with them at 0 only content is left. */
function bytesNanosZeroed(history: History): number {
  const codec = temporal.api.history.v1.History;
  const copy = codec.decode(codec.encode(history).finish());
  const zero = (v: unknown): void => {
    if (v === null || typeof v !== 'object' || ArrayBuffer.isView(v)) return;
    if ('seconds' in v && 'nanos' in v) (v as { nanos: number }).nanos = 0;
    for (const child of Object.values(v)) zero(child);
  };
  zero(copy);
  return codec.encode(copy).finish().length;
}

export function conversationMarkdown(f: ConversationFigures): string {
  const yes = (b: boolean) => (b ? 'yes' : 'no');
  const n = (x: number) => x.toLocaleString('en-US');
  const signed = (x: number) => `${x > 0 ? '+' : ''}${n(x)}`;
  return [
    '## Conversation size vs history (one job per size: talk → read, handover transcript_materialize)\n',
    markdownTable(
      [
        'conversation',
        'history bytes',
        'history bytes, nanos zeroed',
        'history events',
        'conversation bytes in the store',
        'log messages',
        'trace blocks offloaded',
        'transcript URI in history',
        'conversation in history',
      ],
      f.jobs.map((j) => [
        label(j.conversation_bytes_requested),
        n(j.history_bytes),
        n(j.history_bytes_nanos_zeroed),
        n(j.history_events),
        n(j.conversation_bytes_in_store),
        j.log_messages,
        j.trace_blocks_offloaded,
        yes(j.transcript_uri_in_history),
        yes(j.conversation_in_history),
      ]),
    ),
    '',
    `history bytes 1 MB − 10 KB: ${signed(f.history_bytes_difference)} (nanos zeroed: ${signed(f.history_bytes_nanos_zeroed_difference)}); the reference (transcript URI) is ${f.reference_bytes} bytes`,
    `history bytes 1 MB / 10 KB: ${f.history_bytes_ratio.toFixed(4)}×`,
  ].join('\n');
}
