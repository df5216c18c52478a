/**
 * `npm run bench [-- --jobs 10 --rounds 8 --shapes --cluster --json]`: what handrail costs over a bare Temporal chain of
 * the same five stage activities, on one dev server (with --cluster, on a cluster of its own:
 * PostgreSQL persistence and visibility, bench/cluster-lab.ts). Batches of N jobs alternate between
 * `handoffJob` and the baseline (bench/baseline/workflow.ts), each served by its own worker
 * process so CPU and peak RSS are the worker's alone; a third side runs handrail with the payload
 * codec (AES-256-GCM on worker and client) in the same rounds, for the codec's cost against
 * handrail plain, and each side's history bytes and dev-server CPU per job (the server shares the
 * machine). A fourth side runs the bare chain leaving handrail's history shape (its
 * search-attribute upserts, bench/baseline/workflow.ts `shapedBaselineJob`), which splits
 * handrail's cost into the server's share for that history and the rail's own work; then issue
 * 19's targets, met or not (bench/targets.ts). Also: a rejected hop's cost, replay speed,
 * validations per second (bench/contracts.ts), history bytes per job with a 10 KB and a 1 MB
 * conversation (bench/conversation/), a hub job's latency against the serial relay of the
 * same stages (bench/hub/), model tokens per research-brief job with per-edge handover against
 * the whole conversation at every hop (bench/tokens/), and the records API's list route against a bare Fastify
 * route (bench/api/). Markdown on stdout (with --json, the JSON report), JSON under results/.
 */
import { BUILT_IN_PIPELINES } from '../contracts/pipelines';
import { handrailLogger } from '../src/worker/logger';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { parseArgs } from 'node:util';
import { randomBytes } from 'node:crypto';
import { Client } from '@temporalio/client';
import type { DataConverter } from '@temporalio/common';
import { Runtime, Worker } from '@temporalio/worker';
import type { JobResult } from '../contracts';
import { startJob, startSearchAttributes } from '../src/operator/client';
import { ticketTriage } from '../contracts/pipelines';
import { handrailDataConverter, parseCodecKeys } from '../src/codec';
import { workflowRuntime } from '../src/worker/worker';
import { sampleJobRequest } from '../src/devtools/samples/tickets';
import { firstPackage } from '../workflows/rail/first-package';
import type { StageHopRequest, StageHopResult } from '../workflows/stage-hop';
import type { BaselineResult, HistoryShape } from './baseline/workflow';
import { conversationMarkdown, conversationVsHistory } from './conversation/measure';
import { tokensMarkdown, tokensPerJob } from './tokens/measure';
import { hubMarkdown, hubVsRelay } from './hub/measure';
import { apiListMarkdown, apiListVsBareRoute } from './api/measure';
import {
  activitiesScheduled,
  encodedHistory,
  eventTypeCounts,
  fetchHistories,
  localActivitiesRecorded,
  meanEvents,
  meanStageHops,
  stageActivitiesScheduled,
  type History,
} from './history';
import { BASELINE_WORKFLOWS, HANDRAIL_WORKFLOWS, NAMESPACE, newTraceparent, runId, startLab, writeBundle } from './lab';
import { fmt, markdownTable, percentile, printReport, runMain } from './report';
import { startWorkerProcess, type WorkerProcess } from './workers';
import { judgeTargets } from './targets';
import { startClusterLab } from './cluster-lab';

const { values: args } = parseArgs({
  options: {
    jobs: { type: 'string', default: '10' },
    // Three rounds moved the jobs/s ratio by ±10 % from run to run, more than its target's margin; ten, by ±3 %.
    rounds: { type: 'string', default: '8' },
    'rejected-hops': { type: 'string', default: '5' },
    'validation-ms': { type: 'string', default: '300' },
    'hub-jobs': { type: 'string', default: '5' },
    'api-seconds': { type: 'string', default: '3' },
    // Two more shaped sides: a patch marker alone, and one upsert per hop (the event budget:
    // the bare chain + 1 per hop).
    shapes: { type: 'boolean' },
    // On a cluster of its own (PostgreSQL visibility, bench/cluster-lab.ts) instead of a dev server.
    cluster: { type: 'boolean' },
    json: { type: 'boolean' },
  },
});
const JOBS = Number(args.jobs);
const ROUNDS = Number(args.rounds);

type Kind = 'handrail' | 'baseline';

interface Side {
  /** handrail's sides start `handoffJob` through the client; baseline sides `baselineJob`, or
   * `shapedBaselineJob` with their shape. */
  kind: Kind;
  /** The history a shaped side leaves (bench/baseline/workflow.ts). */
  shape?: HistoryShape;
  label: string;
  /** The side's own client, with its worker's codec keys (the codec side: a key of the run's own). */
  client: Client;
  /** Its worker's data converter (the baseline's worker runs the SDK default, which reads the same plain payloads). */
  dataConverter: DataConverter;
  worker: WorkerProcess;
  taskQueue: string;
  bundleCode: string;
  /** The recorded batches, in round order: the side's figures are over all of them, and each
   * round's alone shows how much a figure moves between rounds. */
  batches: Batch[];
}

interface Batch {
  jobIds: string[];
  latenciesMs: number[];
  seconds: number;
  cpuMicros: number;
  /** The dev server's CPU over the batch (it serves one side at a time); NaN without /proc. */
  serverCpuMicros: number;
}

const BATCH_METRICS = [
  'jobs_per_second',
  'p50_latency_ms',
  'p95_latency_ms',
  'worker_cpu_ms_per_job',
  'server_cpu_ms_per_job',
] as const;
type BatchFigures = Pick<SideFigures, (typeof BATCH_METRICS)[number]>;

/** Throughput, latency and CPU over some batches (N jobs started at once, each timed alone). */
function batchFigures(batches: readonly Batch[]): BatchFigures {
  const jobs = batches.reduce((n, b) => n + b.jobIds.length, 0);
  const latencies = batches.flatMap((b) => b.latenciesMs);
  return {
    jobs_per_second: jobs / batches.reduce((t, b) => t + b.seconds, 0),
    p50_latency_ms: percentile(latencies, 50),
    p95_latency_ms: percentile(latencies, 95),
    worker_cpu_ms_per_job: batches.reduce((t, b) => t + b.cpuMicros, 0) / 1000 / jobs,
    server_cpu_ms_per_job: batches.reduce((t, b) => t + b.serverCpuMicros, 0) / 1000 / jobs,
  };
}

interface SideFigures {
  jobs_per_second: number;
  p50_latency_ms: number;
  p95_latency_ms: number;
  history_events_per_job: number;
  history_bytes_per_job: number;
  worker_cpu_ms_per_job: number;
  server_cpu_ms_per_job: number;
  worker_peak_rss_mb: number;
  replay_histories_per_second: number;
}

// Worker and replay chatter would bury the tables; warnings still show.
Runtime.install({ logger: handrailLogger() });

/** One batch: N jobs started at once, each timed from its start call to its result. */
async function runBatch(
  side: Side,
  tag: string,
  record: boolean,
  serverCpuMicros: () => number | undefined,
): Promise<void> {
  const { client } = side;
  const before = await side.worker.usage();
  const serverBefore = serverCpuMicros() ?? NaN;
  const t0 = Date.now();
  const ids = Array.from({ length: JOBS }, (_, i) => `${side.taskQueue}-${tag}-${i}`);
  const latencies = await Promise.all(
    ids.map(async (jobId) => {
      const request = { ...sampleJobRequest(jobId), traceparent: newTraceparent() };
      const started = Date.now();
      if (side.kind === 'handrail') {
        const { handle } = await startJob(client, request, {
          taskQueue: side.taskQueue,
          pipelines: BUILT_IN_PIPELINES,
        });
        const result: JobResult = await handle.result();
        if (result.status !== 'completed') throw new Error(`${jobId} ended ${result.status}: ${result.reason ?? ''}`);
      } else {
        const [workflowType, workflowArgs] = side.shape
          ? (['shapedBaselineJob', [request, side.shape]] as const)
          : (['baselineJob', [request]] as const);
        // Started as startJob starts a job, with its first attributes, when its history is handrail's.
        const attributes =
          side.shape === 'handrail' ? { typedSearchAttributes: startSearchAttributes(request, ticketTriage) } : {};
        await client.workflow.execute<(r: typeof request, shape?: HistoryShape) => Promise<BaselineResult>>(
          workflowType,
          { taskQueue: side.taskQueue, workflowId: jobId, args: workflowArgs, ...attributes },
        );
      }
      return Date.now() - started;
    }),
  );
  if (!record) return;
  const seconds = (Date.now() - t0) / 1000;
  side.batches.push({
    jobIds: ids,
    latenciesMs: latencies,
    seconds,
    cpuMicros: (await side.worker.usage()).cpuMicros - before.cpuMicros,
    serverCpuMicros: (serverCpuMicros() ?? NaN) - serverBefore,
  });
}

/** Histories replayed per second by one replay worker, after an untimed warm-up call (worker
 * setup is not replay); each history goes through several times so setup does not dominate. */
async function replayPerSecond(
  side: Side,
  histories: { workflowId: string; history: History }[],
  repeat = 3,
): Promise<number> {
  // As `handrail replay` runs on plain Node: without the source maps tsx turned on in this process.
  process.setSourceMapsEnabled(false);
  const replay = async (batch: typeof histories) => {
    // handrail replays with the converter and interceptors its worker runs with.
    const runtime = side.kind === 'handrail' ? workflowRuntime(side.dataConverter) : {};
    for await (const result of Worker.runReplayHistories(
      { ...runtime, workflowBundle: { code: side.bundleCode } },
      batch,
    )) {
      if (result.error) throw new Error(`replay of ${result.workflowId} failed: ${result.error.message}`);
    }
  };
  await replay(histories.slice(0, 1));
  // Under their own workflow ids: the rail checks that a job runs under its own id.
  const batch = Array.from({ length: repeat }, () => histories).flat();
  const t0 = process.hrtime.bigint();
  await replay(batch);
  return batch.length / (Number(process.hrtime.bigint() - t0) / 1e9);
}

async function figures(
  client: Client,
  side: Side,
): Promise<{ figures: SideFigures; events: Record<string, number>; stageHops: number }> {
  const jobIds = side.batches.flatMap((b) => b.jobIds);
  const histories = await fetchHistories(client, jobIds);
  const events = eventTypeCounts(histories);
  for (const type of Object.keys(events)) events[type]! /= histories.length;
  return {
    events,
    stageHops: meanStageHops(histories),
    figures: {
      ...batchFigures(side.batches),
      history_events_per_job: meanEvents(histories),
      history_bytes_per_job: histories.reduce((n, h) => n + encodedHistory(h).bytes, 0) / histories.length,
      worker_peak_rss_mb: (await side.worker.usage()).maxRssBytes / 2 ** 20,
      replay_histories_per_second: await replayPerSecond(
        side,
        histories.map((history, i) => ({ workflowId: jobIds[i]!, history })),
      ),
    },
  };
}

/** A refused hop against an accepted one, both through stageHop to intake. */
async function hopCosts(client: Client, taskQueue: string, count: number) {
  const measure = async (label: string, makePackage: (i: number) => unknown) => {
    const ids = Array.from({ length: count }, (_, i) => `${taskQueue}-${label}-${i}`);
    const acks: string[] = [];
    for (const [i, workflowId] of ids.entries()) {
      const res = await client.workflow.execute<(r: StageHopRequest) => Promise<StageHopResult>>('stageHop', {
        taskQueue,
        workflowId,
        args: [{ stage: 'intake', package: makePackage(i) }],
      });
      acks.push(res.ack.ack);
    }
    const histories = await fetchHistories(client, ids);
    return {
      acks: [...new Set(acks)].join(', '),
      history_events: meanEvents(histories),
      stage_activities_run: histories.reduce((n, h) => n + stageActivitiesScheduled(h).length, 0) / histories.length,
      rail_activities_run:
        histories.reduce((n, h) => n + activitiesScheduled(h).length - stageActivitiesScheduled(h).length, 0) /
        histories.length,
      local_activities_run: histories.reduce((n, h) => n + localActivitiesRecorded(h), 0) / histories.length,
    };
  };
  const valid = (i: number) => firstPackage(sampleJobRequest(`${taskQueue}-hop-${i}`), newTraceparent(), ticketTriage);
  return {
    rejected: await measure('rejected', (i) => {
      const { job_id: _missing, ...pkg } = valid(i);
      return pkg;
    }),
    accepted: await measure('accepted', valid),
  };
}

/** Runs the existing contracts benchmark and reads its table. */
async function validationsPerSecond(millis: number) {
  const { stdout } = await promisify(execFile)(process.execPath, [
    '--import',
    'tsx',
    path.join(__dirname, 'contracts.ts'),
    String(millis),
  ]);
  const num = (s: string) => Number(s.replace(/,/g, ''));
  return stdout.split('\n').flatMap((line) => {
    const m = /^(.*?)\s{2,}([\d,]+)\s+([\d,]+)\s+[\d.]+x\s+([\d,]+)\s*$/.exec(line);
    return m
      ? [
          {
            fixtures: m[1]!,
            ajv_per_second: num(m[2]!),
            zod_per_second: num(m[3]!),
            validate_handoff_per_second: num(m[4]!),
          },
        ]
      : [];
  });
}

async function main(): Promise<void> {
  const lab = args.cluster ? await startClusterLab('bench') : await startLab('bench');
  const sides: Side[] = [];
  try {
    const id = runId();
    // The codec side runs handrail's bundle with a fresh key on its worker and its client; every
    // other side runs plain whatever keys this shell has. Each side has a client to match.
    const codecKeys = JSON.stringify({ keys: [{ id: 'bench', key: randomBytes(32).toString('base64') }] });
    const plain = handrailDataConverter(undefined);
    const encrypted = handrailDataConverter(parseCodecKeys(codecKeys, 'the bench'));
    const bundles = {
      handrail: await writeBundle(HANDRAIL_WORKFLOWS, path.join(lab.tmp, 'handrail-workflows.js')),
      baseline: await writeBundle(BASELINE_WORKFLOWS, path.join(lab.tmp, 'baseline-workflows.js')),
    };
    const plans = [
      { label: 'handrail', kind: 'handrail', dataConverter: plain, codecKeys: '' },
      { label: 'baseline', kind: 'baseline', dataConverter: plain, codecKeys: '' },
      { label: 'codec', kind: 'handrail', dataConverter: encrypted, codecKeys },
      { label: 'shaped', kind: 'baseline', shape: 'handrail', dataConverter: plain, codecKeys: '' },
      ...(args.shapes
        ? ([
            { label: 'marker', kind: 'baseline', shape: 'marker', dataConverter: plain, codecKeys: '' },
            { label: 'upsert-per-hop', kind: 'baseline', shape: 'upsert-per-hop', dataConverter: plain, codecKeys: '' },
          ] as const)
        : []),
    ] as const;
    for (const plan of plans) {
      const taskQueue = `bench-${plan.label}-${id}`;
      const bundlePath = bundles[plan.kind];
      const worker = await startWorkerProcess({
        kind: plan.kind,
        address: lab.address,
        taskQueue,
        dataDir: path.join(lab.tmp, `${plan.label}-store`),
        bundlePath,
        codecKeys: plan.codecKeys,
      });
      const client = new Client({
        connection: lab.client.connection,
        namespace: NAMESPACE,
        dataConverter: plan.dataConverter,
      });
      sides.push({
        label: plan.label,
        kind: plan.kind,
        ...('shape' in plan ? { shape: plan.shape } : {}),
        dataConverter: plan.dataConverter,
        client,
        worker,
        taskQueue,
        bundleCode: fs.readFileSync(bundlePath, 'utf8'),
        batches: [],
      });
    }
    const [handrail, baseline, codec, shaped, ...moreShapes] = sides as [Side, Side, Side, Side, ...Side[]];
    console.error(
      `bench: warm-up, then ${ROUNDS} rounds of ${JOBS} jobs per side (${sides.map((side) => side.label).join(', ')}) ...`,
    );
    const serverCpu = () => lab.serverCpuMicros();
    for (const side of sides) await runBatch(side, 'warmup', false, serverCpu);
    for (let round = 0; round < ROUNDS; round++) {
      // Rotating who goes first spreads drift in the machine's load over every side.
      for (const side of [...sides.slice(round % sides.length), ...sides.slice(0, round % sides.length)])
        await runBatch(side, `r${round}`, true, serverCpu);
    }

    const h = await figures(lab.client, handrail);
    const b = await figures(lab.client, baseline);
    const c = await figures(lab.client, codec);
    const s = await figures(lab.client, shaped);
    // One after another: each side's replay is timed alone.
    const more = [];
    for (const side of moreShapes) more.push({ label: side.label, ...(await figures(lab.client, side)) });
    const hops = await hopCosts(handrail.client, handrail.taskQueue, Number(args['rejected-hops']));
    const validations = await validationsPerSecond(Number(args['validation-ms']));
    const conversation = await conversationVsHistory(lab);
    const tokens = await tokensPerJob(lab);
    const hub = await hubVsRelay(lab, Number(args['hub-jobs']));
    const api = await apiListVsBareRoute(lab.tmp, lab.client, {
      seconds: Number(args['api-seconds']),
      rounds: 2,
      connections: 10,
    });

    // The server's CPU and history bytes have no target: they show the server's share of a job,
    // which the two cores also give to it (without /proc the server's row is left out).
    const metrics = (
      [
        ['jobs_per_second', 'jobs / s'],
        ['p50_latency_ms', 'p50 job latency (ms)'],
        ['p95_latency_ms', 'p95 job latency (ms)'],
        ['history_events_per_job', 'history events / job'],
        ['history_bytes_per_job', 'history bytes / job'],
        ['worker_cpu_ms_per_job', 'worker CPU (ms) / job'],
        ['server_cpu_ms_per_job', `${args.cluster ? 'server (Temporal and PostgreSQL)' : 'dev server'} CPU (ms) / job`],
        ['worker_peak_rss_mb', 'worker peak RSS (MiB)'],
        ['replay_histories_per_second', 'replay (histories / s)'],
      ] as [keyof SideFigures, string][]
    ).filter(([k]) => !Number.isNaN(h.figures[k]));
    // One side's figures over another's, metric by metric.
    const ratiosOf = (top: SideFigures, bottom: SideFigures) =>
      Object.fromEntries(metrics.map(([k]) => [k, top[k] / bottom[k]]));
    const ratios = ratiosOf(h.figures, b.figures);
    // The same ratios batch by batch: the spread is this run's noise, against which a target is read.
    const roundMetrics = metrics.filter((m): m is [keyof BatchFigures, string] =>
      (BATCH_METRICS as readonly string[]).includes(m[0]),
    );
    const roundRatios = handrail.batches.map((hb, i) => {
      const [hf, bf] = [batchFigures([hb]), batchFigures([baseline.batches[i]!])];
      return Object.fromEntries(roundMetrics.map(([k]) => [k, hf[k] / bf[k]])) as BatchFigures;
    });
    const codecRatios = ratiosOf(c.figures, h.figures);
    // The history handrail's contract asks for, against the bare chain; the rail's own work, against that.
    const shapeRatios = ratiosOf(s.figures, b.figures);
    const railRatios = ratiosOf(h.figures, s.figures);
    const moreRatios = more.map((m) => ({
      label: m.label,
      figures: m.figures,
      ratios_vs_baseline: ratiosOf(m.figures, b.figures),
    }));
    const eventTypes = [...new Set([...Object.keys(h.events), ...Object.keys(b.events)])]
      .map((type) => ({ type, handrail: h.events[type] ?? 0, baseline: b.events[type] ?? 0 }))
      .filter((e) => e.handrail !== e.baseline)
      .sort((x, y) => y.handrail - y.baseline - (x.handrail - x.baseline));

    const targets = judgeTargets({
      handrail: h.figures,
      baseline: b.figures,
      hops_per_job: h.stageHops,
      validation_vs_zod: validations.map((v) => v.validate_handoff_per_second / v.zod_per_second),
    });

    const body = {
      server: args.cluster ? 'cluster' : 'dev server',
      jobs_per_batch: JOBS,
      rounds: ROUNDS,
      ratios,
      handrail: h.figures,
      baseline: b.figures,
      ratios_by_round: roundRatios,
      codec: { ratios: codecRatios, figures: c.figures },
      shaped: {
        ratios_vs_baseline: shapeRatios,
        handrail_ratios_vs_shaped: railRatios,
        figures: s.figures,
        other_shapes: moreRatios,
      },
      targets,
      history_events_by_type: { handrail: h.events, baseline: b.events, shaped: s.events },
      hop_cost: hops,
      validations,
      conversation_vs_history: conversation,
      tokens_per_job: tokens,
      hub_vs_relay: hub,
      api_list_vs_bare_route: api,
    };
    printReport('bench', body, Boolean(args.json), () =>
      [
        `\n## handrail vs a bare chain of the same five activities (${ROUNDS} × ${JOBS} jobs per side, alternating batches, on ${args.cluster ? 'a cluster: PostgreSQL persistence and visibility; server CPU is the Temporal server and PostgreSQL' : 'the dev server'})\n`,
        markdownTable(
          ['metric', 'handrail / baseline', 'handrail', 'baseline'],
          metrics.map(([k, label]) => [label, `${fmt(ratios[k]!)}×`, fmt(h.figures[k]), fmt(b.figures[k])]),
        ),
        '\n### handrail / baseline round by round (each round one batch per side)\n',
        markdownTable(
          ['metric', ...roundRatios.map((_, i) => `round ${i + 1}`)],
          roundMetrics.map(([k, label]) => [label, ...roundRatios.map((r) => `${fmt(r[k])}×`)]),
        ),
        '\n### Where the extra history events come from (per job)\n',
        markdownTable(
          ['event type', 'handrail', 'baseline', 'extra'],
          eventTypes.map((e) => [e.type, fmt(e.handrail), fmt(e.baseline), fmt(e.handrail - e.baseline)]),
        ),
        `\n### Where handrail's cost comes from: the history its contract asks for, and the rail's own work\n`,
        "The shaped side is the bare chain with handrail's history shape and nothing else: the rail's search attributes set at the start, then upserted at each later hop and at the end (bench/baseline/workflow.ts `shapedBaselineJob`)." +
          (moreRatios.length > 0
            ? ' With `--shapes`, two more: the marker alone, and one upsert per hop with no marker (the event budget: the bare chain + 1 per hop).\n'
            : '\n'),
        markdownTable(
          [
            'metric',
            'handrail / baseline',
            'shaped / baseline (the history)',
            "handrail / shaped (the rail's work)",
            'shaped',
            ...moreRatios.map((m) => `${m.label} / baseline`),
          ],
          metrics.map(([k, label]) => [
            label,
            `${fmt(ratios[k]!)}×`,
            `${fmt(shapeRatios[k]!)}×`,
            `${fmt(railRatios[k]!)}×`,
            fmt(s.figures[k]),
            ...moreRatios.map((m) => `${fmt(m.ratios_vs_baseline[k]!)}×`),
          ]),
        ),
        `\n### The performance targets (${targets.filter((t) => t.met).length} of ${targets.length} met in this run)\n`,
        markdownTable(
          ['figure', 'target', 'this run', 'met'],
          targets.map((t) => [
            t.figure,
            t.target,
            t.figure.startsWith('history events') ? fmt(t.measured) : `${t.measured.toFixed(3)}×`,
            t.met ? 'yes' : 'no',
          ]),
        ),
        '\n`npm run load` judges its own target (stageHop / bare deliveries/s ≥ 0.9×) and `npm run bench:scaling` shows package bytes by hop.\n',
        `\n### The payload codec's cost: handrail with AES-256-GCM payloads against handrail plain (same rounds)\n`,
        markdownTable(
          ['metric', 'codec / plain', 'codec', 'plain'],
          metrics.map(([k, label]) => [label, `${fmt(codecRatios[k]!)}×`, fmt(c.figures[k]), fmt(h.figures[k])]),
        ),
        `\n### A hop through stageHop → intake (mean of ${args['rejected-hops']})\n`,
        markdownTable(
          [
            'hop',
            'ack',
            'history events',
            'stage activities run',
            'rail activities run (duplicate lookup)',
            'local activities run',
          ],
          (['rejected', 'accepted'] as const).map((k) => [
            k === 'rejected' ? 'rejected (job_id missing)' : 'accepted',
            hops[k].acks,
            fmt(hops[k].history_events),
            fmt(hops[k].stage_activities_run),
            fmt(hops[k].rail_activities_run),
            fmt(hops[k].local_activities_run),
          ]),
        ),
        `\n### Validations per second (bench/contracts.ts, ${args['validation-ms']} ms per case)\n`,
        markdownTable(
          ['fixtures', 'ajv standalone / zod', 'ajv / s', 'zod / s', 'validateHandoff / s'],
          validations.map((v) => [
            v.fixtures,
            `${fmt(v.ajv_per_second / v.zod_per_second)}×`,
            fmt(v.ajv_per_second),
            fmt(v.zod_per_second),
            fmt(v.validate_handoff_per_second),
          ]),
        ),
        `\n${conversationMarkdown(conversation)}`,
        `\n${tokensMarkdown(tokens)}`,
        `\n${hubMarkdown(hub)}`,
        `\n${apiListMarkdown(api)}`,
      ].join('\n'),
    );
  } finally {
    await Promise.all(sides.map((s) => s.worker.stop()));
    await lab.stop();
  }
}

runMain(main);
