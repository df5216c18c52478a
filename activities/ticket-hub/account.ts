/**
 * account: `intake.v1` → `account_history.v1`, the customer's earlier tickets as the CRM holds them
 * (what writeback and crm-note wrote for earlier jobs). The ticket in hand is left out: a retried
 * or re-run job finds its own earlier write there, which is not history.
 */
import { AccountHistoryV1, toolCall, toolResult, type EarlierTicket, type HandoffV1 } from '../../contracts';
import { clip } from '../../contracts/errors';
import { ACCOUNT_HISTORY, accountStage } from '../../contracts/pipelines/ticket-hub';
import type { CustomerTicket, Store } from '../../src/worker/store';
import { writeArtifact } from '../artifacts';
import type { StageOutput } from '../stage';
import type { StageTurn } from '../turn';
import { readIntake } from '../ticket-triage/retrieval';

/** Earlier tickets listed: enough to see a pattern, few enough to keep the artifact small. */
export const HISTORY_LIMIT = 10;
const EXCERPT_CHARS = 200;

export async function runAccount(store: Store, pkg: HandoffV1, turn: StageTurn): Promise<StageOutput> {
  const intake = await readIntake(store, pkg, accountStage.name);
  await turn.prompt({ question: `List the earlier tickets of customer ${intake.customer_id}` });
  // One more than listed says whether the CRM holds more.
  const found = await store.listCustomerTickets(intake.customer_id, HISTORY_LIMIT + 1, intake.ticket_id);
  const tickets = found.slice(0, HISTORY_LIMIT).map(earlierTicket);
  turn.reply(
    toolCall('crm.read', { customer_id: intake.customer_id, limit: HISTORY_LIMIT + 1, except: intake.ticket_id }),
    toolResult(tickets.map((t) => `${t.ticket_id} ${t.status} ${t.updated_at}`).join('\n') || 'no earlier tickets'),
  );
  const body: AccountHistoryV1 = { customer_id: intake.customer_id, tickets, count: tickets.length, more: found.length > HISTORY_LIMIT };
  return {
    artifact: await writeArtifact(store, ACCOUNT_HISTORY, AccountHistoryV1, body),
    body,
    cost_usd: accountStage.nominalCostUsd,
    tools_tried: [{ name: 'crm.read', ok: true }],
  };
}

function earlierTicket(ticket: CustomerTicket): EarlierTicket {
  return {
    ticket_id: ticket.ticket_id,
    status: ticket.status,
    note_excerpt: clip(ticket.note.replace(/\s+/g, ' ').trim(), EXCERPT_CHARS),
    updated_at: ticket.updated_at,
  };
}
