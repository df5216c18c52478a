// The pipelines the shipped worker runs; the first is the default for a job that names none.
import type { Pipeline } from '../rail';
import { researchBrief } from './research-brief';
import { supportRouting } from './support-routing';
import { ticketHub } from './ticket-hub';
import { ticketTriage } from './ticket-triage';

export { researchBrief, supportRouting, ticketHub, ticketTriage };
export const BUILT_IN_PIPELINES: readonly Pipeline[] = [ticketTriage, supportRouting, ticketHub, researchBrief];
export { ticketEntry } from './ticket-entry';
