/**
 * writeback: a passing `verdict.v1` → the CRM patch (status + internal note) → `receipt.v1`.
 * The single writer. It re-checks the verdict itself (a second gate behind the rail) and writes
 * under `job_id:writeback:receipt.v1`, so retries and duplicate deliveries get the first receipt.
 */
import { ReceiptV1, SummaryMd, VerdictV1, type HandoffV1 } from '../../contracts';
import { writeKey } from '../../contracts';
import { writebackStage } from '../../contracts/pipelines/ticket-triage';
import type { Store } from '../../src/worker/store';
import { latestArtifact, readArtifactBody, requireArtifact, writeArtifact } from '../artifacts';
import { refuseBreaches, type StageOutput } from '../stage';
import { stageFailure } from '../failures';
import { readIntake } from './retrieval';

export async function runWriteback(store: Store, pkg: HandoffV1): Promise<StageOutput> {
  const verdictRef = requireArtifact(pkg, writebackStage.name, 'verdict.v1');
  const verdict = await readArtifactBody(store, verdictRef, VerdictV1);
  const summaryRef = latestArtifact(pkg, 'summary_md');
  const refuse = (why: string) => stageFailure('VerdictNotPassing', `writeback refuses: ${why}`);
  if (verdict.verdict !== 'pass') throw refuse(`the verdict is "${verdict.verdict}" (${verdict.failures.join('; ')})`);
  if (pkg.evaluator.last_verdict !== 'pass') throw refuse(`the package's last verdict is "${pkg.evaluator.last_verdict}"`);
  if (!summaryRef) throw refuse('there is no draft to write');
  // A pass for an older draft does not cover the latest one.
  if (verdict.summary_hash !== summaryRef.hash) throw refuse('the passing verdict judged a different draft than the latest one');

  const summary = await readArtifactBody(store, summaryRef, SummaryMd);
  const intake = await readIntake(store, pkg, writebackStage.name);
  const needsHuman = latestArtifact(pkg, 'chunks.v1', 'no_hit.v1')?.type === 'no_hit.v1' || intake.risk === 'high';
  refuseBreaches(pkg.constraints, summary.markdown, writebackStage.name);
  const receipt = await store.patchCrmOnce(writeKey(pkg.job_id, writebackStage), {
    ticket_id: intake.ticket_id,
    customer_id: intake.customer_id,
    status: needsHuman ? 'needs_human' : 'triaged',
    note: summary.markdown,
  });
  return {
    artifact: await writeArtifact(store, 'receipt.v1', ReceiptV1, receipt),
    body: receipt,
    cost_usd: writebackStage.nominalCostUsd,
    tools_tried: [{ name: 'crm.patch', ok: true }],
  };
}
