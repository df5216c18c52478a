// The hub bench's pipeline: `start`, then the specialists `spec-a` and `spec-b`, then `finish`.
// The ticket picks the shape: `hub` fans the specialists out at once and the rail merges them;
// `relay` runs them one after the other. One pipeline, so both shapes run the very same cards on
// one worker (a relay pipeline of its own could not share `finish`, which takes the merged type:
// outside a pipeline with the fan-out nothing produces it). Pure (the rail imports it into the
// workflow sandbox).
import { definePipeline, defineStage } from '../../contracts';
import { ticketEntry } from '../../contracts/pipelines/ticket-entry';

export const START = 'bench-start.v1';
export const SPEC_A = 'bench-spec-a.v1';
export const SPEC_B = 'bench-spec-b.v1';
export const MERGED = 'bench-merged.v1';
export const FINISH = 'bench-finish.v1';

export const SHAPES = ['hub', 'relay'] as const;
export type Shape = (typeof SHAPES)[number];

/** Every card's worst case (nominal cost 0): every hop reserves and settles, as a paid stage would. */
export const WORST_CASE_USD = 0.001;
const costs = { nominalCostUsd: 0, worstCaseCostUsd: WORST_CASE_USD };

export const startStage = defineStage({
  name: 'start',
  accepts: ['ticket.raw'],
  outputs: [START],
  criteria: ['reports the shape the ticket asks for (hub or relay)'],
  ...costs,
});

export const specAStage = defineStage({
  name: 'spec-a',
  accepts: [START],
  outputs: [SPEC_A],
  criteria: ['takes a fixed time, like a model call'],
  ...costs,
});

export const specBStage = defineStage({
  name: 'spec-b',
  // START as a specialist of the hub, SPEC_A as the relay's second stage.
  accepts: [START, SPEC_A],
  outputs: [SPEC_B],
  criteria: ['takes a fixed time, like a model call'],
  ...costs,
});

export const finishStage = defineStage({
  name: 'finish',
  // MERGED after the hub's merge, SPEC_B at the end of the relay.
  accepts: [MERGED, SPEC_B],
  outputs: [FINISH],
  criteria: ['answers at once'],
  ...costs,
});

export const hubBench = definePipeline({
  name: 'bench-hub',
  entry: ticketEntry,
  description:
    'Two specialists at once (shape hub) or one after the other (shape relay), between the same start and finish (bench only).',
  stages: [startStage, specAStage, specBStage, finishStage],
  routes: [
    { after: 'ticket.raw', to: 'start', reason: 'start' },
    {
      after: START,
      when: (f) => f.body(START)?.shape === 'hub',
      fanOut: ['spec-a', 'spec-b'],
      merge: MERGED,
      reason: 'both specialists at once',
    },
    { after: START, to: 'spec-a', reason: 'relay: first specialist' },
    { after: SPEC_A, to: 'spec-b', reason: 'relay: second specialist' },
    { after: SPEC_B, to: 'finish', reason: 'relay: finish' },
    { after: MERGED, to: 'finish', reason: 'hub: finish from the merge' },
    { after: FINISH, complete: 'finished' },
  ],
});
