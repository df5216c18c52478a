// The conversation bench's pipeline: `talk` makes a conversation of the size the ticket asks
// for, `read` is handed it as a trace file. Pure (the rail imports it into the workflow sandbox).
import { definePipeline, defineStage } from '../../contracts';
import { ticketEntry } from '../../contracts/pipelines/ticket-entry';

export const TALK = 'talk.v1';
export const READ = 'read.v1';

export const talkStage = defineStage({
  name: 'talk',
  accepts: ['ticket.raw'],
  outputs: [TALK],
  criteria: ['replies with exactly the conversation bytes the ticket asks for'],
  nominalCostUsd: 0,
});

export const readStage = defineStage({
  name: 'read',
  accepts: [TALK],
  outputs: [READ],
  criteria: ['is handed the conversation as a trace file, replies small'],
  nominalCostUsd: 0,
});

export const conversationBench = definePipeline({
  name: 'bench-conversation',
  entry: ticketEntry,
  description: 'A conversation of a requested size, handed over as a trace file (bench only).',
  stages: [talkStage, readStage],
  routes: [
    { after: 'ticket.raw', to: 'talk', reason: 'make the conversation' },
    { after: TALK, to: 'read', reason: 'read the conversation' },
    { after: READ, complete: 'conversation read' },
  ],
  edges: [{ from: 'talk', to: 'read', handover: 'transcript_materialize' }],
});
