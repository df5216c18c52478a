/**
 * An agent pipeline: `planner` (a model turn) splits the ticket's question into search queries,
 * `researcher` (a tool loop) answers them with the search tool of its own MCP server, `critic`
 * (a model turn) judges the notes, and `writer`, the single writer, writes the brief once to the
 * `briefs` system. Every stage is a model stage; the stage work lives in activities/research-brief/.
 */
import { defineStage, definePipeline, type EdgeOptions, type RouteRule } from '../rail';
import { ticketEntry } from './ticket-entry';

export const RESEARCH_PLAN = 'research-plan.v1';
export const RESEARCH_NOTES = 'research-notes.v1';
export const BRIEF = 'brief.v1';

export const plannerStage = defineStage({
  name: 'planner',
  accepts: ['ticket.raw'],
  outputs: [RESEARCH_PLAN],
  criteria: ['restates the question', 'one to three search queries'],
  nominalCostUsd: 0.002,
  worstCaseCostUsd: 0.05,
  activity: { startToCloseTimeout: '60s' },
});

export const researcherStage = defineStage({
  name: 'researcher',
  accepts: [RESEARCH_PLAN],
  outputs: [RESEARCH_NOTES],
  // A human asked about a search (where a worker grants it with approval) may run it with another query.
  tools: [{ name: 'search', access: 'read', system: 'library', usdPerCall: 0.0005, approvalEdits: true }],
  criteria: ['every finding comes from a search result, with its source'],
  nominalCostUsd: 0.005,
  worstCaseCostUsd: 0.2,
  activity: { startToCloseTimeout: '120s' },
});

export const criticStage = defineStage({
  name: 'critic',
  role: 'critic',
  accepts: [RESEARCH_NOTES],
  outputs: ['verdict.v1'],
  criteria: ['every planned query has a finding', 'findings cite a source'],
  nominalCostUsd: 0.002,
  worstCaseCostUsd: 0.05,
  activity: { startToCloseTimeout: '60s' },
});

export const writerStage = defineStage({
  name: 'writer',
  role: 'writer',
  accepts: ['verdict.v1'],
  outputs: [BRIEF],
  writes: 'briefs',
  // The brief and its write key commit together in the store (writeOnce): a resend is answered with the first.
  reconcile: 'idempotent',
  tools: [{ name: 'briefs.write', access: 'write', system: 'briefs' }],
  criteria: ['writes the brief once, keyed job_id:writer:brief.v1', 'only behind a passing verdict'],
  nominalCostUsd: 0.002,
  worstCaseCostUsd: 0.05,
  // The write is keyed, so retrying is safe.
  activity: { startToCloseTimeout: '60s', retry: { maximumAttempts: 5 } },
});

/** A failing verdict has no route: the job escalates to a human with the critic's failures. */
export const RESEARCH_ROUTES: readonly RouteRule[] = [
  { after: 'ticket.raw', to: 'planner', reason: 'new question: plan the research' },
  { after: RESEARCH_PLAN, to: 'researcher', reason: 'plan ready: search', handoff: 'specialization' },
  { after: RESEARCH_NOTES, to: 'critic', reason: 'check the notes', handoff: 'capability_boundary' },
  { after: 'verdict.v1', verdict: 'pass', to: 'writer', reason: 'notes passed: write the brief' },
  { after: BRIEF, complete: 'brief written' },
];

const STAGES = [plannerStage, researcherStage, criticStage, writerStage];
const HOPS = [
  ['planner', 'researcher'],
  ['researcher', 'critic'],
  ['critic', 'writer'],
] as const;

/** The edges of a variant that hands the whole conversation to every stage (what agent
 * frameworks do by default): the token bench runs it against the per-edge handover. */
export const wholeConversationEdges: EdgeOptions[] = HOPS.map(([from, to]) => ({ from, to, handover: 'history' }));

export const researchBrief = definePipeline({
  name: 'research-brief',
  description:
    'Plan the research for a question, answer it with a search tool (MCP), have a critic check the notes, and write the brief once.',
  entry: ticketEntry,
  stages: STAGES,
  routes: RESEARCH_ROUTES,
  // Per-edge handover: each stage reads the artifacts it accepts from the package; only the
  // critic also reads the researcher's turn (its searches and what they returned), to check the
  // notes against them.
  edges: [{ from: 'researcher', to: 'critic', handover: 'transcript_prepend' }],
});
