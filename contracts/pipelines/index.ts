// The pipelines the shipped worker runs; the first is the default for a job that names none.
import type { Pipeline } from '../pipeline';
import { supportRouting } from './support-routing';
import { ticketTriage } from './ticket-triage';

export { supportRouting, ticketTriage };
export const BUILT_IN_PIPELINES: readonly Pipeline[] = [ticketTriage, supportRouting];
