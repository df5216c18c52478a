/**
 * The write chaos's writer (`npm run chaos -- --writes`): the ticket pipeline's writeback pays
 * through one of three payments APIs, one per reconcile mode, picked by the job's id. The bench
 * worker process swaps it in when HANDRAIL_BENCH_PAYMENTS names the APIs.
 */
import { stageActivities } from '../activities/stage';
import { ticketTriage } from '../contracts/pipelines/ticket-triage';
import { RECONCILE_MODES, type ReconcileMode } from '../contracts/stages';
import { payingWriteback } from '../src/devtools/payments-writer';
import type { Store } from '../src/worker/store';

/** The environment variable carrying each reconcile mode's payments API (JSON, mode → URL). */
export const PAYMENTS_ENV = 'HANDRAIL_BENCH_PAYMENTS';

export type PaymentsUrls = Record<ReconcileMode, string>;
export const MODES = Object.keys(RECONCILE_MODES) as ReconcileMode[];

/** A write-chaos job's id says how its writer's system is reconciled. */
export const payingJobId = (prefix: string, i: number, mode: ReconcileMode) => `${prefix}-${mode}-job${i}`;

export function reconcileOfJob(jobId: string): ReconcileMode {
  const mode = MODES.find((m) => jobId.includes(`-${m}-job`));
  if (!mode) throw new Error(`job ${jobId} is not a write-chaos job (its id names no reconcile mode)`);
  return mode;
}

/** The writeback activity that pays, for the worker's `overrideActivities`. */
export function payingActivities(store: Store, urls: PaymentsUrls) {
  return stageActivities(ticketTriage, store, {
    writeback: payingWriteback(store, (jobId) => {
      const reconcile = reconcileOfJob(jobId);
      return { reconcile, url: urls[reconcile] };
    }),
  });
}
