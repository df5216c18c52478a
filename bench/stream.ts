/**
 * `npm run bench:stream [-- --jobs 12 --rounds 2 --followers 10 --idle 1000]`: what following jobs
 * costs, measured in one run on a dev server of its own.
 * - Model token → SSE client latency: a model endpoint streams timestamped chunks every 10 ms to a
 *   draft stage; an SSE follower of the API server stamps each on arrival (one clock: one process).
 * - Jobs/s and worker CPU with `--followers` SSE followers per job against none, rounds alternating.
 * - The API server's RSS (a process of its own) with `--idle` followers of a job waiting on a human.
 * Markdown on stdout, JSON under results/.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Client, type WorkflowClientInterceptor } from '@temporalio/client';
import { BUILT_IN_PIPELINES } from '../contracts/pipelines';
import { handrailDataConverter } from '../src/codec';
import { freePort } from '../src/devtools/devserver/server';
import { completionAsStream } from '../src/devtools/scripted-model';
import { sseFrames } from '../test/helpers/sse';
import { sampleJobRequest } from '../src/devtools/samples/tickets';
import { cancelJob, jobResult, startJob } from '../src/operator/client';
import { apiUsers, sha256Token } from '../src/servers/api-users';
import { buildHandoffsApi } from '../src/servers/handoffs-api';
import { openStore } from '../src/worker/store';
import { HANDRAIL_WORKFLOWS, runId, sleep, startLab, writeBundle, type Lab } from './lab';
import { fmt, markdownTable, percentile, runMain, writeResults } from './report';
import { startWorkerProcess, type WorkerProcess } from './workers';

const { values: args } = parseArgs({
  options: {
    jobs: { type: 'string', default: '12' },
    rounds: { type: 'string', default: '2' },
    followers: { type: 'string', default: '10' },
    idle: { type: 'string', default: '1000' },
  },
});

const TOKEN = 'bench-stream-token';
const USERS_JSON = JSON.stringify({ bench: { token_sha256: sha256Token(TOKEN), role: 'root' } });
const CHUNKS = 150;
const CHUNK_MS = 10;

/** A model endpoint: a draft streams `CHUNKS` chunks, each carrying the time it was sent, once
 * `attached` resolves (a follower is reading the job: a token's latency is its path to a reader,
 * not how long a new follower takes to catch up); the judge passes. */
async function timedModel(attached: Promise<void>): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      const request = JSON.parse(body) as { messages: { content: string }[]; stream?: boolean };
      const grading = request.messages[0]?.content.startsWith('You grade');
      const usage = { prompt_tokens: 100, completion_tokens: CHUNKS };
      if (grading || !request.stream) {
        const content = grading ? '{"answers_question": 1, "note": "ok"}' : 'no stream asked';
        const completion = {
          choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
          usage,
        };
        if (request.stream)
          res.writeHead(200, { 'content-type': 'text/event-stream' }).end(completionAsStream(completion));
        else res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(completion));
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const frame = (o: object) => res.write(`data: ${JSON.stringify(o)}\n\n`);
      const chunk = (delta: object, finish: string | null = null) =>
        frame({
          id: 'c',
          object: 'chat.completion.chunk',
          created: 0,
          model: 'timed',
          choices: [{ index: 0, delta, finish_reason: finish }],
        });
      chunk({ role: 'assistant', content: '' });
      void attached.then(() => {
        let sent = 0;
        const timer = setInterval(() => {
          if (sent++ < CHUNKS) return void chunk({ content: `⟨${Date.now()}⟩ ` });
          clearInterval(timer);
          chunk({}, 'stop');
          frame({ id: 'c', object: 'chat.completion.chunk', created: 0, model: 'timed', choices: [], usage });
          res.end('data: [DONE]\n\n');
        }, CHUNK_MS);
      });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    close: () => new Promise((r) => (server.closeAllConnections(), server.close(() => r()))),
  };
}

/** Reads a job's SSE stream, handing each frame's parsed data (and its arrival time) to `onFrame`. */
async function follow(
  url: string,
  onFrame: (event: { type: string; delta?: string; name?: string }, at: number) => 'stop' | void,
  signal?: AbortSignal,
): Promise<void> {
  const res = await fetch(url, { headers: { authorization: `Bearer ${TOKEN}` }, ...(signal ? { signal } : {}) });
  try {
    for await (const frame of sseFrames<{ type: string; delta?: string; name?: string }>(
      res.body as unknown as AsyncIterable<Uint8Array>,
    ))
      if (onFrame(frame.event, frame.at) === 'stop') return;
  } catch (err) {
    if (!signal?.aborted) throw err;
  }
}

async function tokenLatency(lab: Lab, bundlePath: string) {
  let onAttached = () => {};
  const model = await timedModel(new Promise<void>((resolve) => (onAttached = resolve)));
  const dataDir = fs.mkdtempSync(path.join(lab.tmp, 'latency-'));
  const taskQueue = `bench-stream-latency-${runId()}`;
  const worker = await startWorkerProcess({
    kind: 'handrail',
    address: lab.address,
    taskQueue,
    dataDir,
    bundlePath,
    env: {
      HANDRAIL_MODEL_BASE_URL: model.url,
      HANDRAIL_MODEL: 'timed',
      HANDRAIL_MODEL_USD_PER_MTOK_IN: '1',
      HANDRAIL_MODEL_USD_PER_MTOK_OUT: '1',
    },
  });
  const store = await openStore({ dataDir });
  const api = apiFor(lab, store);
  const base = await api.listen({ port: 0, host: '127.0.0.1' });
  const latencies: number[] = [];
  const toStore = { p50: NaN, p95: NaN };
  try {
    const jobId = `stream-latency-${runId()}`;
    await startJob(lab.client, { ...sampleJobRequest(jobId), budget: { usd: 1, revisions: 0 } }, { taskQueue });
    const abort = new AbortController();
    // Where the time goes: when each token is first in the store (read on a connection of its own).
    const stored: number[] = [];
    const seen = new Set<string>();
    const probe = setInterval(() => {
      void store.readStreamEntries(jobId, 0, 10_000).then((rows) => {
        const at = Date.now();
        for (const r of rows)
          if (r.key.startsWith('text:') && !seen.has(r.key)) {
            seen.add(r.key);
            for (const m of r.body.matchAll(/⟨(\d+)⟩/g)) stored.push(at - Number(m[1]));
          }
      });
    }, 5);
    await follow(
      `${base}/jobs/${jobId}/events`,
      (event, at) => {
        onAttached();
        for (const m of (event.delta ?? '').matchAll(/⟨(\d+)⟩/g)) latencies.push(at - Number(m[1]));
        if (latencies.length >= CHUNKS || event.type === 'RUN_FINISHED' || event.type === 'RUN_ERROR') return 'stop';
      },
      abort.signal,
    );
    clearInterval(probe);
    toStore.p50 = percentile(stored, 0.5);
    toStore.p95 = percentile(stored, 0.95);
    await cancelJob(lab.client, jobId).catch(() => undefined);
  } finally {
    api.server.closeAllConnections();
    await api.close();
    await store.close();
    await worker.stop();
    await model.close();
  }
  return {
    samples: latencies.length,
    p50: percentile(latencies, 0.5),
    p95: percentile(latencies, 0.95),
    to_store_p50: toStore.p50,
    to_store_p95: toStore.p95,
  };
}

/** The rail's queries the API servers asked, by name (what following costs the jobs' workers). */
const queriesAsked: Record<string, number> = {};

function apiFor(lab: Lab, store: Awaited<ReturnType<typeof openStore>>) {
  const counter: WorkflowClientInterceptor = {
    query: (input, next) => ((queriesAsked[input.queryType] = (queriesAsked[input.queryType] ?? 0) + 1), next(input)),
  };
  const temporal = new Client({
    connection: lab.client.connection,
    namespace: lab.client.options.namespace,
    dataConverter: handrailDataConverter(),
    interceptors: { workflow: [counter] },
  });
  return buildHandoffsApi({
    store,
    users: apiUsers(JSON.parse(USERS_JSON) as Parameters<typeof apiUsers>[0]),
    temporal,
    workspaces: { default: BUILT_IN_PIPELINES.map((p) => p.name) },
  });
}

interface Side {
  seconds: number;
  cpuMicros: number;
  /** The Temporal server's CPU, and this process's (the API server and the SSE clients). */
  serverMicros: number;
  apiMicros: number;
}

/** `jobs` jobs at once on a fresh worker, with `followers` SSE followers each: wall time and worker CPU. */
async function batch(lab: Lab, bundlePath: string, jobs: number, followers: number): Promise<Side> {
  const dataDir = fs.mkdtempSync(path.join(lab.tmp, 'batch-'));
  const taskQueue = `bench-stream-${runId()}`;
  const worker: WorkerProcess = await startWorkerProcess({
    kind: 'handrail',
    address: lab.address,
    taskQueue,
    dataDir,
    bundlePath,
  });
  const store = await openStore({ dataDir });
  const api = apiFor(lab, store);
  const base = await api.listen({ port: 0, host: '127.0.0.1' });
  try {
    const before = (await worker.usage()).cpuMicros;
    const serverBefore = lab.serverCpuMicros() ?? 0;
    const apiBefore = process.cpuUsage();
    const started = Date.now();
    const ids = Array.from({ length: jobs }, (_, i) => `stream-bench-${runId()}-${i}`);
    await Promise.all(ids.map((id) => startJob(lab.client, sampleJobRequest(id), { taskQueue })));
    const followed = ids.flatMap((id) =>
      Array.from({ length: followers }, () =>
        follow(`${base}/jobs/${id}/events`, (e) =>
          e.type === 'RUN_FINISHED' || e.type === 'RUN_ERROR' ? 'stop' : undefined,
        ),
      ),
    );
    await Promise.all(ids.map((id) => jobResult(lab.client, id)));
    const seconds = (Date.now() - started) / 1000;
    const cpuMicros = (await worker.usage()).cpuMicros - before;
    const serverMicros = (lab.serverCpuMicros() ?? 0) - serverBefore;
    const api = process.cpuUsage(apiBefore);
    await Promise.all(followed);
    return { seconds, cpuMicros, serverMicros, apiMicros: api.user + api.system };
  } finally {
    api.server.closeAllConnections();
    await api.close();
    await store.close();
    await worker.stop();
  }
}

/** VmRSS of a process, bytes (Linux). */
function rssOf(pid: number): number {
  const line = fs
    .readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('VmRSS:'))!;
  return Number(/(\d+)/.exec(line)![1]) * 1024;
}

/** The API server as its own process, with `idle` followers of a job that waits on a human. */
async function idleRss(lab: Lab, bundlePath: string, idle: number) {
  const dataDir = fs.mkdtempSync(path.join(lab.tmp, 'idle-'));
  const taskQueue = `bench-stream-idle-${runId()}`;
  const worker = await startWorkerProcess({ kind: 'handrail', address: lab.address, taskQueue, dataDir, bundlePath });
  const port = await freePort();
  const server = spawn(
    process.execPath,
    ['--import', 'tsx', path.join(__dirname, '..', 'src', 'servers', 'api-main.ts')],
    {
      env: {
        ...process.env,
        TEMPORAL_ADDRESS: lab.address,
        HANDRAIL_DATA_DIR: dataDir,
        HANDRAIL_API_PORT: String(port),
        HANDRAIL_API_USERS_JSON: USERS_JSON,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const base = `http://127.0.0.1:${port}`;
  try {
    for (let i = 0; i < 300; i++) {
      if (
        await fetch(`${base}/openapi.json`).then(
          (r) => r.ok,
          () => false,
        )
      )
        break;
      await sleep(100);
    }
    const jobId = `stream-idle-${runId()}`;
    // A wallet too small for the draft: the job waits on a human, its followers idle.
    await startJob(lab.client, { ...sampleJobRequest(jobId), budget: { usd: 0.005, revisions: 1 } }, { taskQueue });
    await follow(`${base}/jobs/${jobId}/events`, (e) => (e.name === 'handrail.escalation' ? 'stop' : undefined));
    await sleep(1_000);
    const before = rssOf(server.pid!);
    const abort = new AbortController();
    let waiting = 0;
    const followers = Array.from({ length: idle }, () =>
      follow(`${base}/jobs/${jobId}/events`, (e) => void (e.name === 'handrail.escalation' && waiting++), abort.signal),
    );
    const deadline = Date.now() + 120_000;
    while (waiting < idle && Date.now() < deadline) await sleep(200);
    await sleep(2_000);
    const after = rssOf(server.pid!);
    abort.abort();
    await Promise.allSettled(followers);
    await cancelJob(lab.client, jobId).catch(() => undefined);
    return {
      followers: waiting,
      rss_before_mb: before / 2 ** 20,
      rss_after_mb: after / 2 ** 20,
      kb_per_follower: (after - before) / 1024 / Math.max(1, waiting),
    };
  } finally {
    // The server ends its streams and exits on SIGTERM; a SIGKILL after 10 s leaves nothing behind.
    const exited = new Promise((resolve) => server.once('exit', resolve));
    server.kill('SIGTERM');
    const late = setTimeout(() => server.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(late);
    await worker.stop();
  }
}

async function main(): Promise<boolean> {
  const lab = await startLab('bench-stream');
  try {
    const bundlePath = await writeBundle(HANDRAIL_WORKFLOWS, path.join(lab.tmp, 'workflow-bundle.js'));
    console.error('token latency …');
    const latency = await tokenLatency(lab, bundlePath);
    const jobs = Number(args.jobs);
    const followers = Number(args.followers);
    const sides: { none: Side[]; followed: Side[] } = { none: [], followed: [] };
    for (const k of Object.keys(queriesAsked)) delete queriesAsked[k];
    for (let round = 0; round < Number(args.rounds); round++) {
      console.error(`round ${round + 1}: ${jobs} jobs, none / ${followers} followers each …`);
      sides.none.push(await batch(lab, bundlePath, jobs, 0));
      sides.followed.push(await batch(lab, bundlePath, jobs, followers));
    }
    const sum = (xs: Side[], k: keyof Side) => xs.reduce((a, s) => a + s[k], 0);
    const jobsPerS = (xs: Side[]) => (xs.length * jobs) / sum(xs, 'seconds');
    const perJob = (xs: Side[], k: keyof Side) => sum(xs, k) / (xs.length * jobs) / 1000;
    const cpuPerJob = (xs: Side[]) => perJob(xs, 'cpuMicros');
    const throughput = {
      jobs_per_s: { none: jobsPerS(sides.none), followed: jobsPerS(sides.followed) },
      worker_cpu_ms_per_job: { none: cpuPerJob(sides.none), followed: cpuPerJob(sides.followed) },
      // Where the rest of the machine's time went: the jobs/s ratio is the whole machine's.
      server_cpu_ms_per_job: {
        none: perJob(sides.none, 'serverMicros'),
        followed: perJob(sides.followed, 'serverMicros'),
      },
      api_cpu_ms_per_job: { none: perJob(sides.none, 'apiMicros'), followed: perJob(sides.followed, 'apiMicros') },
      queries_per_followed_job: Object.values(queriesAsked).reduce((a, b) => a + b, 0) / (sides.followed.length * jobs),
    };
    console.error(`${args.idle} idle followers …`);
    const idle = await idleRss(lab, bundlePath, Number(args.idle));
    const ratio = {
      jobs_per_s: throughput.jobs_per_s.followed / throughput.jobs_per_s.none,
      worker_cpu: throughput.worker_cpu_ms_per_job.followed / throughput.worker_cpu_ms_per_job.none,
    };
    console.log(
      [
        '## Following jobs (bench:stream)',
        '',
        markdownTable(
          ['figure', 'measured', 'target'],
          [
            ['model token → SSE client, p50', `${fmt(latency.p50)} ms (${latency.samples} tokens)`, '≤ 50 ms'],
            ['model token → SSE client, p95', `${fmt(latency.p95)} ms`, ''],
            [
              'model token → in the store (of the above), p50 / p95',
              `${fmt(latency.to_store_p50)} / ${fmt(latency.to_store_p95)} ms`,
              '',
            ],
            [
              `jobs/s, ${followers} followers per job / none`,
              `${fmt(ratio.jobs_per_s)}× (${fmt(throughput.jobs_per_s.followed)} / ${fmt(throughput.jobs_per_s.none)})`,
              '≥ 0.95×',
            ],
            [
              `worker CPU per job, ${followers} followers / none`,
              `${fmt(ratio.worker_cpu)}× (${fmt(throughput.worker_cpu_ms_per_job.followed)} / ${fmt(throughput.worker_cpu_ms_per_job.none)} ms)`,
              '≤ 1.05×',
            ],
            ['rail queries per followed job (all its followers)', fmt(throughput.queries_per_followed_job), ''],
            [
              'Temporal server CPU per job, followed / none',
              `${fmt(throughput.server_cpu_ms_per_job.followed)} / ${fmt(throughput.server_cpu_ms_per_job.none)} ms`,
              'reported',
            ],
            [
              'API server and its SSE clients (this process) CPU per job, followed / none',
              `${fmt(throughput.api_cpu_ms_per_job.followed)} / ${fmt(throughput.api_cpu_ms_per_job.none)} ms`,
              'reported',
            ],
            [
              `API server RSS, ${idle.followers} idle followers`,
              `${fmt(idle.rss_after_mb)} MB (${fmt(idle.rss_before_mb)} MB before; ${fmt(idle.kb_per_follower)} KB each)`,
              'reported',
            ],
          ],
        ),
      ].join('\n'),
    );
    console.log(
      `\nJSON: ${path.relative(process.cwd(), writeResults('bench-stream', { latency, throughput, ratio, idle, jobs, followers }))}`,
    );
    return true;
  } finally {
    // Followers' long polls let go of the connection before it closes.
    await sleep(1_000);
    await lab.stop();
  }
}

runMain(main);
