// The tokens bench's second pipeline: research-brief's stages and routes with the whole
// conversation handed to every stage (what agent frameworks do by default), against the
// built-in's per-edge handover. Pure (the rail imports it into the workflow sandbox).
import { definePipeline } from '../../contracts';
import {
  criticStage,
  plannerStage,
  RESEARCH_ROUTES,
  researcherStage,
  wholeConversationEdges,
  writerStage,
} from '../../contracts/pipelines/research-brief';
import { ticketEntry } from '../../contracts/pipelines/ticket-entry';

export const researchBriefWholeConversation = definePipeline({
  name: 'research-brief-whole-conversation',
  description: 'research-brief with the whole conversation handed over at every hop',
  entry: ticketEntry,
  stages: [plannerStage, researcherStage, criticStage, writerStage],
  routes: RESEARCH_ROUTES,
  edges: wholeConversationEdges,
});
