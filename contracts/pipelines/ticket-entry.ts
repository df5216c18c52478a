/**
 * The ticket pipelines' entry: a `ticket.raw` body, checked by its precompiled validator (no zod in
 * the workflow bundle), filed under its customer in the first package's memory refs. Requests from
 * before `entry` carried the ticket as `ticket`; they are read the same way.
 */
import { validators, type EntrySpec } from '../rail';
import type { TicketRaw } from './ticket-artifacts';

export const ticketEntry: EntrySpec<TicketRaw> = {
  type: 'ticket.raw',
  schema: validators.ticketRaw,
  // A request not yet validated may lack the id (a recorded history from before validation).
  memoryRefs: (ticket) => (ticket.customer_id ? [`customer_id:${ticket.customer_id}`] : []),
  alias: 'ticket',
};
