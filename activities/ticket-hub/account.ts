/**
 * account: `intake.v1` → `account_history.v1`, the customer's earlier tickets as the CRM holds them
 * (what writeback and crm-note wrote for earlier jobs). The ticket in hand is left out: a retried
 * or re-run job finds its own earlier write there, which is not history.
 */
import { LIMITS, assistantMessage, toolCall, toolResult, type HandoffV1, clip } from '../../contracts';
import { AccountHistoryV1, type EarlierTicket } from '../../contracts/pipelines/ticket-artifacts';
import { ACCOUNT_HISTORY, accountStage } from '../../contracts/pipelines/ticket-hub';
import {
  type ChatModel,
  type CustomerTicket,
  type Store,
  askModel,
  writeArtifact,
  type StageOutput,
  type StageTurn,
} from '../../src';
import { readIntake } from '../ticket-triage/retrieval';

/** Earlier tickets listed: enough to see a pattern, few enough to keep the artifact small. */
export const HISTORY_LIMIT = 10;
const EXCERPT_CHARS = 200;

export async function runAccount(
  store: Store,
  model: ChatModel | undefined,
  pkg: HandoffV1,
  turn: StageTurn,
): Promise<StageOutput> {
  const intake = await readIntake(store, pkg, accountStage.name);
  // One more than listed says whether the CRM holds more.
  const found = await store.listCustomerTickets(intake.customer_id, HISTORY_LIMIT + 1, intake.ticket_id);
  const tickets = found.slice(0, HISTORY_LIMIT).map(earlierTicket);
  const listed =
    tickets.map((t) => `${t.ticket_id} ${t.status} ${t.updated_at}: ${t.note_excerpt}`).join('\n') ||
    'no earlier tickets';
  const read = [
    toolCall('crm.read', { customer_id: intake.customer_id, limit: HISTORY_LIMIT + 1, except: intake.ticket_id }),
    toolResult(listed),
  ];
  let pattern: string | undefined;
  let cost = accountStage.nominalCostUsd;
  // A model says what the earlier tickets have in common; with none, there is nothing to ask.
  if (model && tickets.length > 0) {
    const { messages } = await turn.prompt({
      system:
        "You read a support customer's earlier tickets and say in one line what they have in common (topics, outcomes). No advice, no promises.",
      question: `Earlier tickets of customer ${intake.customer_id}:\n${listed}`,
    });
    const reply = await askModel(model, messages, { maxTokens: 80 });
    pattern = clip(reply.text.replace(/\s+/g, ' ').trim(), LIMITS.shortText) || undefined;
    cost = reply.cost_usd;
    turn.reply(...read, ...(pattern ? [assistantMessage(pattern)] : []));
  } else {
    await turn.prompt({ question: `List the earlier tickets of customer ${intake.customer_id}` });
    turn.reply(...read);
  }
  const body: AccountHistoryV1 = {
    customer_id: intake.customer_id,
    tickets,
    count: tickets.length,
    more: found.length > HISTORY_LIMIT,
    ...(pattern ? { pattern } : {}),
  };
  return {
    artifact: await writeArtifact(store, ACCOUNT_HISTORY, AccountHistoryV1, body),
    body,
    cost_usd: cost,
    tools_tried: [{ name: 'crm.read', ok: true }],
    summary: accountSummary(body),
  };
}

/** How many earlier tickets the CRM holds for the customer, and which (ids only). */
export function accountSummary(history: AccountHistoryV1): string {
  if (history.count === 0) return `no earlier tickets of customer ${history.customer_id}`;
  const n = `${history.more ? 'more than ' : ''}${history.count} earlier ticket${history.count === 1 && !history.more ? '' : 's'}`;
  return `${n} of customer ${history.customer_id}: ${history.tickets.map((t) => `${t.ticket_id} ${t.status}`).join(', ')}${history.pattern ? `; pattern: ${history.pattern}` : ''}`;
}

function earlierTicket(ticket: CustomerTicket): EarlierTicket {
  return {
    ticket_id: ticket.ticket_id,
    status: ticket.status,
    note_excerpt: clip(ticket.note.replace(/\s+/g, ' ').trim(), EXCERPT_CHARS),
    updated_at: ticket.updated_at,
  };
}
