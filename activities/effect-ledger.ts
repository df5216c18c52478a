/**
 * A writer's write to a system handrail does not own (a payments API, a ticketing SaaS), through
 * the effect ledger: the intent is noted before the request goes out and the outcome after, under
 * the write key, so a retried writer that finds an intent with no outcome knows the write is in
 * doubt and settles it the way its card says (`reconcile`) instead of sending it blindly again.
 */
import {
  IN_DOUBT_DECIDED,
  writeKey,
  type HandoffV1,
  type HookResult,
  type StageCard,
  type WriteReceipt,
} from '../contracts';
import type { EffectEntry, EffectLedger, InDoubtResolution } from '../src/worker/store';
import { isInDoubt } from '../src/worker/store/effects';
import { sha256Hex } from '../src/worker/store/content';
import { stageFailure } from './failures';
import { refuseBreaches, refuseForeignWrite } from './stage';

/** The system's own refusal, final: it answered, wrote nothing, and sending the same request again
 * would not change that (a 4xx with a body that says so). The ledger notes it and the stage fails
 * `WriteRefused`. Any other failure of `send` (a dropped connection, a timeout, a 5xx) leaves the
 * write in doubt. */
export class EffectRefused extends Error {
  override readonly name = 'EffectRefused';
}

/** One request to the remote system, with the write key for wherever its protocol has a place for it
 * (an `Idempotency-Key` header, a client reference field, MCP `_meta`, an A2A `messageId`). */
export interface EffectRequest {
  key: string;
  body: string;
}

/** What a writer's system offers the ledger. */
export interface RemoteSystem {
  /** Sends the request and answers the system's reference for the write. */
  send(request: EffectRequest): Promise<{ reference: string }>;
  /** A read by the write key (or the client reference sent with it): the write, if the system holds
   * one. Needed by a card whose `reconcile` is `lookup`. */
  lookup?(key: string): Promise<{ reference: string } | null>;
}

/**
 * Sends `body` to the card's system at most once per job, as far as the card's reconcile mode
 * allows: the ledger holds the intent before the send and the outcome after. A key whose outcome is
 * known answers it (`existing`); a key in doubt is resent (`idempotent`), looked up first (`lookup`),
 * or, with `none`, sent again only once a human said so (else the stage fails `WriteInDoubt` with
 * the evidence, and the job escalates). A key holding another request is refused.
 */
export async function sendOnce(
  ledger: EffectLedger,
  card: Pick<StageCard, 'name' | 'outputs' | 'writes' | 'reconcile'>,
  pkg: Pick<HandoffV1, 'job_id' | 'constraints'>,
  request: { body: string; text?: string },
  remote: RemoteSystem,
): Promise<WriteReceipt> {
  if (card.writes === null)
    throw stageFailure('StageInputInvalid', `${card.name} declares no system it writes; only a writer writes`);
  if (request.text !== undefined) refuseBreaches(pkg.constraints, request.text, card.name);
  const key = writeKey(pkg.job_id, card);
  const { entry, fresh } = await ledger.recordIntent({ key, system: card.writes, request: request.body });
  const requestHash = `sha256:${sha256Hex(request.body)}`;
  if (entry.system !== card.writes || entry.request_hash !== requestHash)
    refuseForeignWrite(card.name, key, foreignView(entry), {
      system: card.writes,
      reference: '',
      payload_hash: requestHash,
    });
  const send = async (resolution?: InDoubtResolution) =>
    sent(ledger, card.name, remote, fresh ? entry : await ledger.recordResend(key), request.body, resolution);
  if (entry.reference !== null) return receiptOf(entry, 'existing');
  if (entry.error !== null) throw writeRefused(card.name, entry.write_key, entry.system, entry.error);
  if (fresh) return send();
  return settleInDoubt(ledger, card, entry, remote, send);
}

async function settleInDoubt(
  ledger: EffectLedger,
  card: Pick<StageCard, 'name' | 'reconcile'>,
  entry: EffectEntry,
  remote: RemoteSystem,
  send: (resolution: InDoubtResolution) => Promise<WriteReceipt>,
): Promise<WriteReceipt> {
  switch (card.reconcile) {
    case 'idempotent':
      return send('resent');
    case 'lookup': {
      if (!remote.lookup)
        throw stageFailure('StageInputInvalid', `${card.name} reconciles by lookup, but its system offers no lookup`);
      const found = await remote.lookup(entry.write_key);
      if (!found) return send('sent_after_lookup');
      const settled = await ledger.recordOutcome(entry.write_key, { ...found, resolution: 'found_by_lookup' });
      return receiptOf(settled, 'existing');
    }
    default:
      if (entry.send_allowed_by !== null) return send('human_send');
      throw stageFailure('WriteInDoubt', inDoubtMessage(card.name, entry), { in_doubt: inDoubtEvidence(entry) });
  }
}

/**
 * A human's word on the writer's write in doubt, handed over with the hop the decision retried:
 * noted on the ledger under the hop's delivery key, so a retried attempt of the same hop takes it
 * once (one "send it" allows one send). A word on a write no longer in doubt changes nothing.
 */
export async function takeInDoubtDecision(
  ledger: Pick<EffectLedger, 'decideInDoubt' | 'findEffect'>,
  card: Pick<StageCard, 'name' | 'outputs' | 'writes'>,
  pkg: Pick<HandoffV1, 'job_id'>,
  hooks: readonly HookResult[] | undefined,
  deliveryKey: string,
): Promise<void> {
  const said = hooks?.find((h) => h.event === IN_DOUBT_DECIDED);
  if (!said || card.writes === null) return;
  const word = JSON.parse(said.text) as { happened?: string; send?: true; actor: string };
  const key = writeKey(pkg.job_id, card);
  const entry = await ledger.findEffect(key);
  if (!entry || !isInDoubt(entry)) return;
  const decision = { actor: word.actor, id: deliveryKey };
  await ledger.decideInDoubt(
    key,
    word.happened !== undefined ? { ...decision, happened: word.happened } : { ...decision, send: true },
  );
}

/** The send itself, its outcome noted: a reference, or the system's refusal (the stage fails `WriteRefused`). */
async function sent(
  ledger: EffectLedger,
  stage: string,
  remote: RemoteSystem,
  entry: EffectEntry,
  body: string,
  resolution: InDoubtResolution | undefined,
): Promise<WriteReceipt> {
  let answer: { reference: string };
  try {
    answer = await remote.send({ key: entry.write_key, body });
  } catch (error) {
    if (!(error instanceof EffectRefused)) throw error;
    await ledger.recordOutcome(entry.write_key, { error: error.message });
    throw writeRefused(stage, entry.write_key, entry.system, error.message);
  }
  const settled = await ledger.recordOutcome(entry.write_key, {
    reference: answer.reference,
    ...(resolution ? { resolution } : {}),
  });
  return receiptOf(settled, 'created');
}

/** A final refusal, as the stage fails with it: retrying cannot help, and nothing is sent again. */
function writeRefused(stage: string, key: string, system: string, refusal: string) {
  return stageFailure(
    'WriteRefused',
    `${stage}: ${system} refused write ${key} (${refusal}); the refusal is final and noted, nothing is sent again`,
    { write_key: key, system, refusal },
  );
}

/** The evidence a human decides a write in doubt on: what was sent, where, when, how often. */
export function inDoubtEvidence(entry: EffectEntry) {
  return {
    write_key: entry.write_key,
    system: entry.system,
    request: entry.request,
    request_hash: entry.request_hash,
    sends: entry.sends,
    last_sent_at: entry.sent_at,
    known: 'the request was sent and no answer was noted: the system may or may not have made the write',
  };
}

function inDoubtMessage(stage: string, entry: EffectEntry): string {
  return `${stage}: write ${entry.write_key} to ${entry.system} is in doubt (sent ${entry.sends}x, last at ${entry.sent_at}, no answer noted) and ${entry.system} cannot be asked; a human must say whether it happened (with its reference) or to send it`;
}

function foreignView(entry: EffectEntry): Pick<WriteReceipt, 'system' | 'reference' | 'payload_hash'> {
  return { system: entry.system, reference: entry.reference ?? '(in doubt)', payload_hash: entry.request_hash };
}

function receiptOf(entry: EffectEntry, status: WriteReceipt['status']): WriteReceipt {
  return {
    write_key: entry.write_key,
    system: entry.system,
    reference: entry.reference!,
    payload_hash: entry.request_hash,
    status,
    written_at: entry.outcome_at!,
    ...(entry.resolution ? { in_doubt: { resolution: entry.resolution, sends: entry.sends } } : {}),
  };
}
