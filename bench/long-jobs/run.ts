/**
 * `npm run long-jobs [-- --decisions 500 --hops 2000]`: the two long jobs on a dev server of their
 * own — a ticket a reviewer sends back `decisions` times, and a relay of `hops` hops whose critique
 * loop is bounded by rounds (`long-critique`, with its hop cap raised to fit). Each must complete
 * with one write, continue as new at least once and pay every hop once; the run prints each job's
 * run chain and what its package carries at the end. `--continue-events`/`--continue-updates` set
 * the requests' `continue_after` (unset: the rail's defaults).
 */
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { NativeConnection, Runtime, type Worker } from '@temporalio/worker';
import type { JobRequest, JobResult } from '../../contracts';
import { ticketTriageActivities } from '../../activities/ticket-triage';
import { HandrailPlugin } from '../../src/plugin';
import { startJob } from '../../src/operator/client';
import { sampleJobRequest } from '../../src/devtools/samples/tickets';
import { bundleRail } from '../../src/worker/bundle';
import { handrailLogger } from '../../src/worker/logger';
import { openStore, type Store } from '../../src/worker/store';
import { createHandrailWorkers, runWorkers } from '../../src/worker/worker';
import { NAMESPACE, runId, startLab, type Lab } from '../lab';
import { runMain } from '../report';
import { relentingJudge } from './activities';
import { formatChain, runChain, sendOnByHuman, type RunLink } from './jobs';
import { LONG_JOB_PIPELINES, longCritique } from './pipeline';

Runtime.install({ logger: handrailLogger('WARN') });

const { values: args } = parseArgs({
  options: {
    decisions: { type: 'string', default: '500' },
    hops: { type: 'string', default: '2000' },
    'continue-events': { type: 'string' },
    'continue-updates': { type: 'string' },
  },
});

/** Failing verdicts each job gets before its judge passes. */
const failuresLeft = new Map<string, number>();

interface Rail {
  lab: Lab;
  store: Store;
  taskQueue: string;
}

const continueAfter = (): JobRequest['continue_after'] => ({
  ...(args['continue-events'] ? { events: Number(args['continue-events']) } : {}),
  ...(args['continue-updates'] ? { updates: Number(args['continue-updates']) } : {}),
});

/** A ticket of its own for `jobId` (CRM rows never meet), with a wallet that covers the long job. */
function longRequest(jobId: string, extra: Partial<JobRequest>): JobRequest {
  const sample = sampleJobRequest(jobId);
  const limits = continueAfter();
  return {
    ...sample,
    ticket: { ...sample.ticket, id: `tkt_${jobId}` },
    budget: { usd: 100, revisions: 0 },
    ...(limits && Object.keys(limits).length > 0 ? { continue_after: limits } : {}),
    ...extra,
  } as JobRequest;
}

async function humanJob(rail: Rail, decisions: number): Promise<Report> {
  const request = longRequest(`long-human-${runId()}`, {});
  failuresLeft.set(request.job_id, decisions);
  const started = Date.now();
  const { handle } = await startJob(rail.lab.client, request, {
    taskQueue: rail.taskQueue,
    pipelines: LONG_JOB_PIPELINES,
  });
  const sent = await sendOnByHuman(rail.lab.client, request.job_id, decisions);
  return report(rail, request, await handle.result(), started, sent);
}

async function relayJob(rail: Rail, hops: number): Promise<Report> {
  // intake, retrieve, draft, judge take 4 hops, each failed round 2 more, the write 1.
  const rounds = Math.ceil((hops - 4) / 2);
  const request = longRequest(`long-relay-${runId()}`, { pipeline: longCritique.name, max_hops: hops + 10 });
  failuresLeft.set(request.job_id, rounds);
  const started = Date.now();
  const { handle } = await startJob(rail.lab.client, request, {
    taskQueue: rail.taskQueue,
    pipelines: LONG_JOB_PIPELINES,
  });
  return report(rail, request, await handle.result(), started, 0);
}

interface Report {
  lines: string[];
  problems: string[];
}

async function report(
  rail: Rail,
  request: JobRequest,
  result: JobResult,
  started: number,
  decisions: number,
): Promise<Report> {
  const seconds = ((Date.now() - started) / 1000).toFixed(0);
  const chain: RunLink[] = await runChain(rail.lab.client, request.job_id, request.continue_after);
  const writes = (await rail.store.listWrites(request.job_id)).length;
  const pkg = result.package;
  const hop = pkg.hop!;
  const left = pkg.budget.usd_remaining;
  const paidOnce = Math.abs(request.budget.usd - result.spent_usd - left) < 1e-6;
  const decided = chain.reduce((n, r) => n + r.updates, 0);
  const lines = [
    `${request.job_id} (${request.pipeline ?? 'ticket-triage'}): ${result.status} in ${seconds}s — ${result.hops} hops, ${decided} decisions, ${writes} write(s), ${chain.length} runs`,
    ...formatChain(chain).map((l) => `  ${l}`),
    `  wallet: spent $${result.spent_usd.toFixed(3)}, $${left.toFixed(3)} left of $${request.budget.usd} (${paidOnce ? 'every hop paid once' : 'MISMATCH'})`,
    `  package: chain ${hop.chain.length} entries kept + ${hop.earlier?.entries ?? 0} earlier (${(hop.earlier?.stages ?? []).join(', ')}); ` +
      `artifacts ${pkg.artifacts.length} kept + ${pkg.earlier_artifacts?.count ?? 0} earlier behind ${pkg.earlier_artifacts?.snapshot ?? '-'}; ` +
      `${Buffer.byteLength(JSON.stringify(pkg))} bytes`,
    `  result: ${result.acks.length} acks kept, earlier ${JSON.stringify(result.earlier_acks ?? {})}`,
  ];
  const problems = [
    ...(result.status !== 'completed' ? [`${request.job_id} ended ${result.status}: ${result.reason}`] : []),
    ...(writes !== 1 ? [`${request.job_id} wrote ${writes} times`] : []),
    ...(chain.length < 2 ? [`${request.job_id} never continued as new`] : []),
    ...(!paidOnce ? [`${request.job_id}: spent + left != budget`] : []),
    ...(decided !== decisions ? [`${request.job_id}: ${decided} decisions in history, ${decisions} sent`] : []),
  ];
  return { lines, problems };
}

async function main(): Promise<void> {
  const lab = await startLab('long-jobs');
  const store = await openStore({ dataDir: fs.mkdtempSync(path.join(lab.tmp, 'store-')), databaseUrl: undefined });
  let workers: Worker[] = [];
  let running: Promise<void> | undefined;
  const connection = await NativeConnection.connect({ address: lab.address });
  try {
    const { code } = await bundleRail(path.join(__dirname, 'workflows.ts'));
    const taskQueue = `long-jobs-${runId()}`;
    workers = await createHandrailWorkers({
      connection,
      plugin: new HandrailPlugin({
        pipelines: LONG_JOB_PIPELINES,
        activities: (deps) => ({
          ...ticketTriageActivities(deps, [longCritique]),
          judge: relentingJudge(deps.store, failuresLeft),
        }),
      }),
      config: { namespace: NAMESPACE, taskQueue },
      store,
      workflowBundle: { code },
    });
    running = runWorkers(workers);
    const rail = { lab, store, taskQueue };
    const reports = [await humanJob(rail, Number(args.decisions)), await relayJob(rail, Number(args.hops))];
    for (const r of reports) console.log(r.lines.join('\n'));
    const problems = reports.flatMap((r) => r.problems);
    if (problems.length > 0)
      throw new Error(`long jobs: ${problems.length} check(s) failed:\n- ${problems.join('\n- ')}`);
  } finally {
    for (const w of workers) w.shutdown();
    await running;
    await store.close();
    await connection.close();
    await lab.stop();
  }
}

runMain(main);
