/**
 * crm-note, the single writer: a passing `verdict.v1` → the CRM patch → `receipt.v1`. Like the
 * reference writeback it re-checks the verdict itself (a second gate behind the rail) and writes
 * under `job_id:crm-note:receipt.v1`, so retries and duplicate deliveries get the first receipt.
 */
import type { HandoffV1 } from '../../contracts';
import { ReceiptV1 } from '../../contracts/pipelines/ticket-artifacts';
import { CLASSIFICATION, crmNoteStage, escalationStage } from '../../contracts/pipelines/support-routing';
import {
  type Store,
  readArtifactBody,
  requireArtifact,
  writeArtifact,
  type StageOutput,
  passedSummary,
} from '../../src';
import { crmNoteSummary, writeCrmNote, type CrmWrites } from '../ticket-triage/crm';
import { Classification } from './classify';
import { SpecialistNote } from './specialists';

/** Reads the evidence from `store`, writes the note to `crm`. */
export async function runCrmNote(store: Store, crm: CrmWrites, pkg: HandoffV1): Promise<StageOutput> {
  const noteRef = await passedSummary(store, pkg, crmNoteStage.name);
  const note = await readArtifactBody(store, noteRef, SpecialistNote);
  const classification = await readArtifactBody(
    store,
    requireArtifact(pkg, crmNoteStage.name, CLASSIFICATION),
    Classification,
  );
  // An escalated ticket waits for the human agent the note asks for.
  const status = note.specialist === escalationStage.name ? 'needs_human' : 'triaged';
  const { receipt, write } = await writeCrmNote(crm, crmNoteStage, pkg, {
    ticket_id: classification.ticket_id,
    customer_id: classification.customer_id,
    status,
    note: note.markdown,
  });
  return {
    artifact: await writeArtifact(store, 'receipt.v1', ReceiptV1, receipt),
    body: receipt,
    receipt: write,
    cost_usd: crmNoteStage.nominalCostUsd,
    tools_tried: [{ name: 'crm.patch', ok: true }],
    summary: crmNoteSummary(receipt, status),
  };
}
