/**
 * The baseline of `npm run load`: the same writeback deliveries as bench/load-shape.ts, at the
 * same concurrency, each a bare workflow running the one stage activity (`baselineHop`,
 * bench/baseline/workflow.ts) — no validation, ack, duplicate lookup or search attributes. A bare
 * workflow has nothing to refuse an invalid package with, so every first delivery is valid; every
 * 20th goes again under the same delivery key once its first has answered, as in the load shape.
 */
import type { Client } from '@temporalio/client';
import type { HandoffV1 } from '../contracts';
import type { BaselineHopRequest } from './baseline/workflow';
import { inParallel, loadShapeFirstPackage, RELAY, roundOf, type TimedLoad } from './load-shape';

export interface BaselineLoadOptions {
  client: Client;
  /** Served by a baseline worker (bench/worker-process.ts, kind `baseline`). */
  taskQueue: string;
  packages: number;
  templates: number;
  concurrency: number;
  prefix: string;
  onProgress?: (text: string) => void;
}

export interface BaselineLoadReport {
  packages: number;
  deliveries: number;
  seconds: number;
  deliveries_per_second: number;
  /** Workflow ids of the timed deliveries (first ones), to read their histories. */
  workflow_ids: string[];
}

interface Delivery {
  workflowId: string;
  request: BaselineHopRequest;
  /** Delivered a second time once answered (every 20th, as the handrail side). */
  again: boolean;
}

/** Relays every package to the judge the bare way (untimed); its deliveries then go out in rounds. */
export async function prepareBaselineLoad(opts: BaselineLoadOptions): Promise<TimedLoad<BaselineLoadReport>> {
  const judged = await judgedPackages(opts);
  const firsts = judged.map((pkg, i): Delivery => ({
    workflowId: `${opts.prefix}-d${i}`,
    request: { stage: 'writeback', package: pkg, delivery_key: `${pkg.job_id}:writeback` },
    again: i % 20 === 0,
  }));
  const total = firsts.length + firsts.filter((d) => d.again).length;
  let delivered = 0;
  let seconds = 0;
  const answered = () => opts.onProgress?.(`… baseline: ${++delivered} of ${total} deliveries answered`);
  return {
    async deliverRound(round, rounds) {
      const started = Date.now();
      await inParallel(roundOf(firsts, round, rounds), opts.concurrency, async (d) => {
        await deliver(opts, d.workflowId, d.request);
        answered();
        if (d.again) {
          await deliver(opts, `${d.workflowId}-again`, d.request);
          answered();
        }
      });
      seconds += (Date.now() - started) / 1000;
    },
    finish: () =>
      Promise.resolve({
        packages: firsts.length,
        deliveries: total,
        seconds,
        deliveries_per_second: total / seconds,
        workflow_ids: firsts.map((d) => d.workflowId),
      }),
  };
}

function deliver(opts: BaselineLoadOptions, workflowId: string, request: BaselineHopRequest): Promise<HandoffV1> {
  return opts.client.workflow.execute<(r: BaselineHopRequest) => Promise<HandoffV1>>('baselineHop', {
    taskQueue: opts.taskQueue,
    workflowId,
    args: [request],
  });
}

/** The load shape's packages made the bare way (untimed): each ticket relayed to the judge by
 * bare hops under its own job id, so writeback finds the chain recorded for that job. */
async function judgedPackages(opts: BaselineLoadOptions): Promise<HandoffV1[]> {
  const made: HandoffV1[] = [];
  await inParallel([...Array(opts.packages).keys()], opts.concurrency, async (i) => {
    let pkg = loadShapeFirstPackage(opts, i);
    for (const stage of RELAY)
      pkg = await deliver(opts, `${pkg.job_id}-${stage}`, {
        stage,
        package: pkg,
        delivery_key: `${pkg.job_id}:${stage}`,
      });
    if (pkg.evaluator.last_verdict !== 'pass')
      throw new Error(`baseline package ${i}: the judge said ${pkg.evaluator.last_verdict}, writeback would refuse`);
    made[i] = pkg;
    opts.onProgress?.(`… baseline: ${made.filter(Boolean).length} of ${opts.packages} packages relayed to the judge`);
  });
  return made;
}
