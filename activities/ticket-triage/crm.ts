/**
 * The ticket pipelines' CRM write: the triage note patched onto the ticket at most once per write
 * key, through the store's keyed writes (system `crm`), with the `receipt.v1` the writer emits
 * and the generic receipt the job's result carries.
 */
import { writeKey, type HandoffV1, type StageCard, type WriteReceipt } from '../../contracts';
import type { ReceiptV1 } from '../../contracts/pipelines/ticket-artifacts';
import { sha256Hex, type CrmPatch, type Store, refuseBreaches, refuseForeignWrite } from '../../src';

/** What the CRM writer needs of a store: the patch and the keyed writes it leaves. */
export type CrmWrites = Pick<Store, 'patchCrmOnce' | 'findWrite'>;

/**
 * The note held to the job's constraints, then written at most once per key. The note is written
 * exactly as judged, never rewritten here (the receipt's note hash is the passing summary's):
 * under redact_personal_data the stage that wrote it masked it, and a note still holding personal
 * data is refused. A key that already holds another write is refused, never reported as this job's.
 */
export async function writeCrmNote(
  crm: CrmWrites,
  card: Pick<StageCard, 'name' | 'outputs'>,
  pkg: Pick<HandoffV1, 'job_id' | 'constraints'>,
  patch: CrmPatch,
): Promise<{ receipt: ReceiptV1; write: WriteReceipt }> {
  refuseBreaches(pkg.constraints, patch.note, card.name);
  const key = writeKey(pkg.job_id, card);
  // Whether this call writes: the store answers a key it holds with the first receipt unchanged.
  const earlier = await crm.findWrite(key);
  const receipt = await crm.patchCrmOnce(key, patch);
  const write: WriteReceipt = {
    write_key: key,
    system: receipt.system,
    reference: receipt.record_id,
    ...(receipt.note_hash ? { payload_hash: receipt.note_hash } : {}),
    status: earlier ? 'existing' : 'created',
    written_at: receipt.written_at,
  };
  refuseForeignWrite(card.name, key, write, {
    system: 'crm',
    reference: `crm_tickets/${patch.ticket_id}`,
    payload_hash: `sha256:${sha256Hex(patch.note)}`,
  });
  return { receipt, write };
}

/** A writer's summary segment: where the note went and what the write did. */
export function crmNoteSummary(receipt: ReceiptV1, status: string): string {
  return `CRM note written to record ${receipt.record_id} (${receipt.status}; ticket ${receipt.ticket_id} ${status})`;
}
