// The pipelines the shipped worker runs; the first is the default for a job that names none.
import type { Pipeline } from '../pipeline';
import { ticketTriage } from './ticket-triage';

export { ticketTriage };
export const BUILT_IN_PIPELINES: readonly Pipeline[] = [ticketTriage];
