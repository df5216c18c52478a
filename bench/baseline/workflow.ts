/**
 * The benchmark's baseline: the same five stage activities chained with nothing around them —
 * no package validation, no ack, no wallet, no hop cap, no duplicate lookup, no search
 * attributes. What handrail costs is measured against this. Bundled only by the bench worker.
 * `baselineHop` is one such activity alone, what `npm run load` measures `stageHop` against.
 */
import { proxyActivities } from '@temporalio/workflow';
import type { HandrailActivities } from '../../activities';
import type { HandoffV1, JobRequest, ReceiptV1 } from '../../contracts';
import { firstPackage } from '../../workflows/rail/first-package';

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
  let pkg = firstPackage(request, request.traceparent);
  let receipt: unknown;
  for (const [n, stage] of CHAIN.entries()) {
    const result = await stages[stage]({ stage, package: pkg, delivery_key: `${request.job_id}:${stage}:${n}` });
    pkg = result.package;
    receipt = result.body;
  }
  return { job_id: request.job_id, receipt: receipt as ReceiptV1 };
}

export interface BaselineHopRequest {
  stage: (typeof CHAIN)[number];
  package: HandoffV1;
  delivery_key: string;
}

/** One stage activity with nothing around it: the package goes in as given, no ack, no lookup. */
export async function baselineHop(request: BaselineHopRequest): Promise<HandoffV1> {
  const result = await stages[request.stage]({ stage: request.stage, package: request.package, delivery_key: request.delivery_key });
  return result.package;
}
