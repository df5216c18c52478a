/**
 * writeback: a passing `verdict.v1` → the CRM patch (status + internal note) → `receipt.v1`.
 * The single writer. It re-checks the verdict itself (a second gate behind the rail) and writes
 * under `job_id:writeback:receipt.v1`, so retries and duplicate deliveries get the first receipt.
 */
import { SummaryMd, toolCall, toolResult, type HandoffV1 } from '../../contracts';
import { ReceiptV1 } from '../../contracts/pipelines/ticket-artifacts';
import { writebackStage } from '../../contracts/pipelines/ticket-triage';
import {
  type Store,
  latestArtifact,
  readArtifactBody,
  writeArtifact,
  type StageOutput,
  type StageTurn,
  passedSummary,
} from '../../src';
import { crmNoteSummary, writeCrmNote, type CrmWrites } from './crm';
import { readIntake } from './retrieval';

/** Reads the evidence from `store`, writes the note to `crm`. */
export async function runWriteback(
  store: Store,
  crm: CrmWrites,
  pkg: HandoffV1,
  turn: StageTurn,
): Promise<StageOutput> {
  const summaryRef = await passedSummary(store, pkg, writebackStage.name);
  const summary = await readArtifactBody(store, summaryRef, SummaryMd);
  const intake = await readIntake(store, pkg, writebackStage.name);
  const needsHuman = latestArtifact(pkg, 'chunks.v1', 'no_hit.v1')?.type === 'no_hit.v1' || intake.risk === 'high';
  const status = needsHuman ? 'needs_human' : 'triaged';
  await turn.prompt({ question: `Write the passing summary to CRM ticket ${intake.ticket_id}` });
  const { receipt, write } = await writeCrmNote(crm, writebackStage, pkg, {
    ticket_id: intake.ticket_id,
    customer_id: intake.customer_id,
    status,
    note: summary.markdown,
  });
  turn.reply(
    toolCall('crm.patch', { ticket_id: intake.ticket_id, status }),
    toolResult(`${receipt.status} ${receipt.record_id} ${receipt.note_hash}`),
  );
  return {
    artifact: await writeArtifact(store, 'receipt.v1', ReceiptV1, receipt),
    body: receipt,
    receipt: write,
    cost_usd: writebackStage.nominalCostUsd,
    tools_tried: [{ name: 'crm.patch', ok: true }],
    summary: crmNoteSummary(receipt, status),
  };
}
