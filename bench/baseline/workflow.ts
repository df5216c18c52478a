/**
 * The benchmark's baseline: the same five stage activities chained with nothing around them —
 * no package validation, no ack, no wallet, no hop cap, no duplicate lookup, no search
 * attributes. What handrail costs is measured against this. Bundled only by the bench worker.
 * `shapedBaselineJob` is the same chain leaving the history handrail's contract asks of Temporal;
 * `baselineHop` is one such activity alone, what `npm run load` measures `stageHop` against.
 */
import { patched, proxyActivities, upsertSearchAttributes } from '@temporalio/workflow';
import type { SearchAttributeUpdatePair } from '@temporalio/common';
import type { HandrailActivities } from '../../activities/built-in';
import type { HandoffV1, JobRequest } from '../../contracts';
import type { ReceiptV1 } from '../../contracts/pipelines/ticket-artifacts';
import { firstPackage } from '../../workflows/rail/first-package';
import { addUsd } from '../../workflows/rail/budget';
import {
  HandrailAck,
  HandrailAcks,
  HandrailHops,
  HandrailStage,
  HandrailStatus,
  HandrailUsdRemaining,
  HandrailVerdict,
} from '../../workflows/search-attributes';
import { ticketTriage } from '../../contracts/pipelines/ticket-triage';

const CHAIN = ['intake', 'retrieve', 'draft', 'judge', 'writeback'] as const;

const stages = proxyActivities<Pick<HandrailActivities, (typeof CHAIN)[number]>>({
  startToCloseTimeout: '30s',
  retry: { maximumAttempts: 3 },
});

export interface BaselineResult {
  job_id: string;
  receipt: ReceiptV1;
}

/** The bench always passes a traceparent, so both workflows carry the same trace. */
export async function baselineJob(request: JobRequest & { traceparent: string }): Promise<BaselineResult> {
  let pkg = firstPackage(request, request.traceparent, ticketTriage);
  let receipt: unknown;
  for (const [n, stage] of CHAIN.entries()) {
    const result = await stages[stage]({ stage, package: pkg, delivery_key: `${request.job_id}:${stage}:${n}` });
    pkg = result.package;
    receipt = result.body;
  }
  return { job_id: request.job_id, receipt: receipt as ReceiptV1 };
}

/**
 * Which of handrail's extra history events a shaped chain leaves: `handrail`, all of them (the rail's
 * search attributes — set at the start, as `startJob` sets them, then upserted at each later hop's
 * start and at the job's end with the keys that changed, as the rail publishes them; the 1.0 rail
 * records no patch marker); `marker`, a patch marker alone (what one post-1.0 patch costs);
 * `upsert-per-hop`, one upsert per hop and no marker — the event budget (the bare chain + 1 per hop).
 */
export type HistoryShape = 'handrail' | 'marker' | 'upsert-per-hop';

/**
 * The bare chain leaving a history shape (above), and nothing else: no check, no ack, no wallet.
 * Against the bare chain it shows what that history costs the server and the worker; against
 * handoffJob, what the rail's own work costs. A patch marker comes with sdk-core's
 * `TemporalChangeVersion` upsert, as any patch the rail takes would.
 */
export async function shapedBaselineJob(
  request: JobRequest & { traceparent: string },
  shape: HistoryShape = 'handrail',
): Promise<BaselineResult> {
  if (shape === 'marker') patched('bench-shape');
  let pkg = firstPackage(request, request.traceparent, ticketTriage);
  let receipt: unknown;
  let usd = request.budget.usd;
  for (const [n, stage] of CHAIN.entries()) {
    const hops = Math.max(0, n - 1);
    if (shape === 'upsert-per-hop')
      upsertSearchAttributes([
        { key: HandrailStage, value: stage },
        { key: HandrailUsdRemaining, value: usd },
        { key: HandrailHops, value: hops },
      ]);
    // The job's first attributes came with its start, as startJob sets them.
    else if (shape === 'handrail' && n > 0) upsertSearchAttributes(hopAttributes(n, stage, usd, hops));
    const result = await stages[stage]({ stage, package: pkg, delivery_key: `${request.job_id}:${stage}:${n}` });
    pkg = result.package;
    receipt = result.body;
    // In micro-dollars, as the rail's wallet: the published values are the rail's to the byte.
    usd = addUsd(usd, -result.cost_usd);
  }
  if (shape === 'handrail') {
    upsertSearchAttributes([
      { key: HandrailStatus, value: 'completed' },
      { key: HandrailUsdRemaining, value: usd },
      { key: HandrailHops, value: CHAIN.length - 1 },
    ]);
  }
  return { job_id: request.job_id, receipt: receipt as ReceiptV1 };
}

/** What the rail publishes before a later hop of the reference relay: what changed since the last (the
 * hop count first moves after the second stage: intake's hop is not a transfer). */
function hopAttributes(n: number, stage: string, usd: number, hops: number): SearchAttributeUpdatePair[] {
  return [
    { key: HandrailStage, value: stage },
    { key: HandrailUsdRemaining, value: usd },
    ...(n >= 2 ? [{ key: HandrailHops, value: hops }] : []),
    ...(n === 1
      ? [
          { key: HandrailAck, value: 'accepted' },
          { key: HandrailAcks, value: ['accepted'] },
        ]
      : []),
    ...(stage === 'writeback' ? [{ key: HandrailVerdict, value: 'pass' }] : []),
  ];
}

export interface BaselineHopRequest {
  stage: (typeof CHAIN)[number];
  package: HandoffV1;
  delivery_key: string;
}

/** One stage activity with nothing around it: the package goes in as given, no ack, no lookup. */
export async function baselineHop(request: BaselineHopRequest): Promise<HandoffV1> {
  const result = await stages[request.stage]({
    stage: request.stage,
    package: request.package,
    delivery_key: request.delivery_key,
  });
  return result.package;
}
