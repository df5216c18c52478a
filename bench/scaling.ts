/**
 * `npm run bench:scaling [-- --rounds 8 --jobs 3 --json]`: what a hop costs as a job grows. Each
 * job runs the ticket-triage relay with a critic that fails the draft `rounds` times (alternating
 * reasons, so the rail never calls it no progress) and then judges it for real, so the critique
 * loop takes 4 + 2 × rounds hops; the job's budget and max_hops are set to allow them. Read from
 * each job's history at hop 1, 5, 10 and 20: history events and bytes so far, the bytes of the
 * package delivered at that hop, and the worker CPU spent so far (an in-process worker, marked at
 * every stage activity's start). Each should grow at most linearly in hops: the per-hop increment
 * over 10→20 is compared with the one over 1→5 (the package should stop growing: bounded).
 */
import { BUILT_IN_PIPELINES } from '../contracts/pipelines';
import { handrailLogger } from '../src/worker/logger';
import { builtInPlugin } from '../src/pipelines';
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Client } from '@temporalio/client';
import { NativeConnection, Runtime } from '@temporalio/worker';
import type { JobResult } from '../contracts';
import {
  readArtifactBody,
  requireArtifact,
  stageActivities,
  SummaryMd,
  VerdictV1,
  writeArtifact,
  type StageActivity,
} from '../src';
import { ticketTriage } from '../contracts/pipelines';
import { handrailDataConverter } from '../src/codec';
import { sampleJobRequest } from '../src/devtools/samples/tickets';
import { startJob } from '../src/operator/client';
import { openStore, type Store } from '../src/worker/store';
import { createHandrailWorkers, runWorkers } from '../src/worker/worker';
import { encodedHistory, stageActivitiesScheduled, type History } from './history';
import { HANDRAIL_WORKFLOWS, NAMESPACE, runId, startLab, writeBundle } from './lab';
import { fmt, markdownTable, percentile, printReport, runMain } from './report';

const { values: args } = parseArgs({
  options: {
    rounds: { type: 'string', default: '8' },
    jobs: { type: 'string', default: '3' },
    json: { type: 'boolean' },
  },
});
const ROUNDS = Number(args.rounds);
const JOBS = Number(args.jobs);
const HOPS = [1, 5, 10, 20] as const;
/** The per-hop increment over 10→20 may differ from the one over 1→5 by this factor and still count as linear. */
const LINEAR_WITHIN = 1.3;
const PACKAGE_TARGET = 1.5;
const STAGES: readonly string[] = ticketTriage.cards.map((card) => card.name);

Runtime.install({ logger: handrailLogger() });

/** A critic that fails the first `rounds` drafts of a job, then hands the draft to the real judge.
 * Its failure codes alternate: the rail stops a loop that fails twice for the same reasons. */
function demandingJudge(store: Store, realJudge: StageActivity, rounds: number): StageActivity {
  // Rounds judged so far, per job: superseded verdicts leave the package (earlier_artifacts).
  const judged = new Map<string, number>();
  const fail = stageActivities(ticketTriage, store, {
    judge: async (pkg) => {
      const round = judged.get(pkg.job_id) ?? 0;
      judged.set(pkg.job_id, round + 1);
      const summaryRef = requireArtifact(pkg, 'judge', 'summary_md');
      const summary = await readArtifactBody(store, summaryRef, SummaryMd);
      const failures = [
        `${round % 2 === 0 ? 'off_topic' : 'incomplete'}: critique round ${round + 1} of ${rounds} (draft of ${summary.markdown.length} characters)`,
      ];
      const body = {
        verdict: 'fail' as const,
        scores: { answers_question: 0 },
        failures,
        summary_hash: summaryRef.hash,
      };
      return {
        artifact: await writeArtifact(store, 'verdict.v1', VerdictV1, body),
        body,
        cost_usd: 0.005,
        evaluator: { last_verdict: 'fail', failures },
      };
    },
  }).judge;
  return (work) => ((judged.get(work.package.job_id) ?? 0) < rounds ? fail(work) : realJudge(work));
}

interface HopFigures {
  history_events: number;
  history_bytes: number;
  package_bytes: number;
  worker_cpu_ms: number;
}

/** Bytes of each top-level field of a package (its JSON), to see which ones grow. */
type FieldBytes = Record<string, number>;

/** Figures at each hop of one job: hop n is the (n+1)th stage activity (the first delivery is hop 0). */
function hopFigures(history: History, cpuAtStart: number[], cpuAtEnd: number): (HopFigures & { fields: FieldBytes })[] {
  const events = history.events ?? [];
  const scheduled = events.flatMap((e, i) =>
    STAGES.includes(e.activityTaskScheduledEventAttributes?.activityType?.name ?? '') ? [{ i, e }] : [],
  );
  return scheduled.map(({ i, e }, hop) => {
    const completed = events.findIndex(
      (c) => Number(c.activityTaskCompletedEventAttributes?.scheduledEventId) === Number(e.eventId),
    );
    const upTo = events.slice(0, (completed >= 0 ? completed : i) + 1);
    const input = e.activityTaskScheduledEventAttributes!.input!.payloads![0]!;
    const work = JSON.parse(Buffer.from(input.data!).toString('utf8')) as { package: Record<string, unknown> };
    return {
      fields: Object.fromEntries(
        Object.entries(work.package).map(([k, v]) => [k, Buffer.byteLength(JSON.stringify(v))]),
      ),
      history_events: upTo.length,
      history_bytes: encodedHistory({ events: upTo }).bytes,
      package_bytes: Buffer.byteLength(JSON.stringify(work.package)),
      worker_cpu_ms: ((cpuAtStart[hop + 1] ?? cpuAtEnd) - cpuAtStart[0]!) / 1000,
    };
  });
}

async function main(): Promise<boolean> {
  const lab = await startLab('scaling');
  try {
    const taskQueue = `scaling-${runId()}`;
    const store = await openStore({ dataDir: path.join(lab.tmp, 'store') });
    // Plain payloads on both sides: the package is read straight from the history's JSON.
    const dataConverter = handrailDataConverter(undefined);
    const client = new Client({ connection: lab.client.connection, namespace: NAMESPACE, dataConverter });
    const connection = await NativeConnection.connect({ address: lab.address });
    /** Worker CPU (µs) at the start of each stage activity, per job. */
    const cpuMarks = new Map<string, number[]>();
    const cpuNow = () => {
      const u = process.cpuUsage();
      return u.user + u.system;
    };
    const workers = await createHandrailWorkers({
      connection,
      plugin: builtInPlugin({ dataConverter }),
      config: { namespace: NAMESPACE, taskQueue },
      store,
      workflowBundle: {
        code: fs.readFileSync(
          await writeBundle(HANDRAIL_WORKFLOWS, path.join(lab.tmp, 'handrail-workflows.js')),
          'utf8',
        ),
      },
      overrideActivities: (real) => {
        const judge = demandingJudge(store, real.judge as StageActivity, ROUNDS);
        const marked =
          (activity: StageActivity): StageActivity =>
          (work) => {
            const marks = cpuMarks.get(work.package.job_id) ?? [];
            marks.push(cpuNow());
            cpuMarks.set(work.package.job_id, marks);
            return activity(work);
          };
        return Object.fromEntries(
          STAGES.map((name) => [
            name,
            marked(name === 'judge' ? judge : (real as unknown as Record<string, StageActivity>)[name]!),
          ]),
        );
      },
    });
    const running = runWorkers(workers);
    const jobs: (HopFigures & { fields: FieldBytes })[][] = [];
    try {
      for (let j = 0; j < JOBS; j++) {
        const request = sampleJobRequest(`${taskQueue}-job${j}`);
        const { handle } = await startJob(
          client,
          {
            ...request,
            ticket: { ...request.ticket, id: `tkt_${taskQueue}_${j}` },
            budget: { usd: 10, revisions: ROUNDS + 1 },
            max_hops: 4 + 2 * ROUNDS + 2,
          },
          { taskQueue, pipelines: BUILT_IN_PIPELINES },
        );
        const result: JobResult = await handle.result();
        const cpuAtEnd = cpuNow();
        if (result.status !== 'completed')
          throw new Error(`${request.job_id} ended ${result.status}: ${result.reason ?? ''}`);
        const history = await handle.fetchHistory();
        const hops = hopFigures(history, cpuMarks.get(request.job_id)!, cpuAtEnd);
        if (hops.length <= HOPS[HOPS.length - 1]!)
          throw new Error(
            `${request.job_id} took ${hops.length - 1} hops (${stageActivitiesScheduled(history).join(' → ')}); raise --rounds`,
          );
        jobs.push(hops);
        console.error(`scaling: job ${j + 1} of ${JOBS}: ${hops.length - 1} hops`);
      }
    } finally {
      for (const w of workers) w.shutdown();
      await running;
      await connection.close();
      await store.close();
    }

    const metrics = ['history_events', 'history_bytes', 'package_bytes', 'worker_cpu_ms'] as const;
    // The median over jobs, hop by hop (one job's CPU at one hop is noisy on a shared machine).
    const at = (hop: number, m: (typeof metrics)[number]) =>
      percentile(
        jobs.map((hops) => hops[hop]![m]),
        50,
      );
    const table = HOPS.map(
      (hop) => ({ hop, ...Object.fromEntries(metrics.map((m) => [m, at(hop, m)])) }) as { hop: number } & HopFigures,
    );
    const growth = Object.fromEntries(
      metrics.map((m) => {
        const early = (at(5, m) - at(1, m)) / 4;
        const late = (at(20, m) - at(10, m)) / 10;
        const ratio = late / early;
        return [
          m,
          {
            per_hop_1_to_5: early,
            per_hop_10_to_20: late,
            ratio,
            linear: ratio <= LINEAR_WITHIN && ratio >= 1 / LINEAR_WITHIN,
            // Better than linear: it stopped growing (the package once its pipeline's types are in).
            bounded: late < early / 10,
          },
        ];
      }),
    ) as Record<
      (typeof metrics)[number],
      { per_hop_1_to_5: number; per_hop_10_to_20: number; ratio: number; linear: boolean; bounded: boolean }
    >;
    const packageRatio = at(10, 'package_bytes') / at(1, 'package_bytes');
    const packageLate = at(20, 'package_bytes') / at(10, 'package_bytes');
    // What the package's growth is made of, in the first job: its fields at hop 1 and hop 20.
    const [first, last] = [jobs[0]![1]!.fields, jobs[0]![20]!.fields];
    const fields = Object.keys(last)
      .map((field) => ({ field, hop_1: first[field] ?? 0, hop_20: last[field]! }))
      .sort((a, b) => b.hop_20 - b.hop_1 - (a.hop_20 - a.hop_1));
    const body = {
      rounds: ROUNDS,
      jobs: JOBS,
      hops: table,
      growth,
      package_bytes_hop10_over_hop1: packageRatio,
      package_bytes_hop20_over_hop10: packageLate,
      package_fields: fields,
      package_target: PACKAGE_TARGET,
      linear_within: LINEAR_WITHIN,
    };
    const labels: Record<(typeof metrics)[number], string> = {
      history_events: 'history events',
      history_bytes: 'history bytes',
      package_bytes: 'package bytes',
      worker_cpu_ms: 'worker CPU (ms)',
    };
    printReport('scaling', body, Boolean(args.json), () =>
      [
        `\n## Cost growth: a critique loop of ${ROUNDS} failed drafts (${4 + 2 * ROUNDS} hops), median of ${JOBS} jobs\n`,
        markdownTable(
          ['hop', ...metrics.map((m) => labels[m])],
          table.map((row) => [row.hop, ...metrics.map((m) => fmt(row[m]))]),
        ),
        `\n### Linear in hops? Per-hop increment over 10→20 against 1→5 (within ${LINEAR_WITHIN}×)\n`,
        markdownTable(
          ['figure', 'per hop, 1→5', 'per hop, 10→20', 'ratio', 'linear'],
          metrics.map((m) => [
            labels[m],
            fmt(growth[m].per_hop_1_to_5),
            fmt(growth[m].per_hop_10_to_20),
            `${fmt(growth[m].ratio)}×`,
            growth[m].bounded ? 'bounded' : growth[m].linear ? 'yes' : 'NO',
          ]),
        ),
        `\npackage bytes, hop 10 / hop 1: **${fmt(packageRatio)}×** (target ≤ ${PACKAGE_TARGET}×: ${packageRatio <= PACKAGE_TARGET ? 'met' : 'not met'}); hop 20 / hop 10: **${fmt(packageLate)}×**`,
        '\n### The package delivered at hop 1 and hop 20, by field (bytes of its JSON; first job)\n',
        markdownTable(
          ['field', 'hop 1', 'hop 20', 'growth'],
          fields
            .filter((f) => f.hop_20 !== f.hop_1 || f.hop_20 > 200)
            .map((f) => [f.field, fmt(f.hop_1), fmt(f.hop_20), fmt(f.hop_20 - f.hop_1)]),
        ),
      ].join('\n'),
    );
    return true;
  } finally {
    await lab.stop();
  }
}

runMain(main);
