/**
 * The ticket pipeline's writer paying a goodwill credit through the reference HTTP payments writer
 * (activities/payments-http.ts) and the effect ledger, instead of writing the CRM: each job's
 * system (its payments API and how it is reconciled) is the caller's pick. The effect ledger's
 * integration tests and the write chaos (`npm run chaos -- --writes`) run their jobs' writes on it.
 */
import { writeArtifact } from '../../activities/artifacts';
import { sendOnce } from '../../activities/effect-ledger';
import { httpPayments } from '../../activities/payments-http';
import type { StageWorkFn } from '../../activities/stage';
import { ReceiptV1 } from '../../contracts/pipelines/ticket-artifacts';
import { writebackStage } from '../../contracts/pipelines/ticket-triage';
import type { ReconcileMode } from '../../contracts/stages';
import type { Store } from '../worker/store';

/** Where a job's writer pays, and how its writes in doubt are reconciled. */
export interface PaymentsSystem {
  reconcile: ReconcileMode;
  url: string;
}

export function payingWriteback(
  store: Store,
  systemOf: (jobId: string) => PaymentsSystem,
  timeoutMs = 2_000,
): StageWorkFn {
  return async (pkg) => {
    const system = systemOf(pkg.job_id);
    const write = await sendOnce(
      store,
      { ...writebackStage, reconcile: system.reconcile },
      pkg,
      { body: JSON.stringify({ usd: 5, memo: `goodwill credit for ${pkg.job_id}` }) },
      httpPayments(system.url, timeoutMs),
    );
    const receipt = {
      idempotency_key: write.write_key,
      system: write.system,
      record_id: write.reference,
      ticket_id: `tkt_${pkg.job_id}`,
      status: 'created' as const,
      written_at: write.written_at,
    };
    return {
      artifact: await writeArtifact(store, 'receipt.v1', ReceiptV1, receipt),
      body: receipt,
      receipt: write,
      cost_usd: writebackStage.nominalCostUsd,
    };
  };
}
