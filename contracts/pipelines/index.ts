// The pipelines the shipped worker runs; the first is the default for a job that names none.
import type { Pipeline } from '../rail';
import { supportRouting } from './support-routing';
import { ticketHub } from './ticket-hub';
import { ticketTriage } from './ticket-triage';

export { supportRouting, ticketHub, ticketTriage };
export const BUILT_IN_PIPELINES: readonly Pipeline[] = [ticketTriage, supportRouting, ticketHub];
export { ticketEntry } from './ticket-entry';
