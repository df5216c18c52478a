/**
 * The research-brief stages, each a model stage (`runModelStage`): the prompt is what the edge's
 * handover produced, the answer is the artifact, valid by its schema. The researcher's search
 * tool comes from the pipeline's own MCP server (library-mcp), started per delivery over stdio.
 */
import path from 'node:path';
import { z } from 'zod';
import { canonicalJson, type HandoffV1, type ToolApproval } from '../../contracts';
import { TicketRaw } from '../../contracts/pipelines/ticket-artifacts';
import {
  BRIEF,
  criticStage,
  plannerStage,
  RESEARCH_NOTES,
  RESEARCH_PLAN,
  researcherStage,
  writerStage,
} from '../../contracts/pipelines/research-brief';
import {
  readArtifactBody,
  requireArtifact,
  runModelStage,
  stageFailure,
  writeOnce,
  type StageOutput,
  type ChatModel,
  type StageTurn,
  type Store,
} from '../../src';
import { Brief, ResearchNotes, ResearchPlan } from './artifacts';

/** The stage's system prompts; the first word names the stage (the offline model answers by it). */
export const SYSTEM = {
  planner: 'planner: split the question into one to three search queries for the billing policy library.',
  researcher: 'researcher: answer each query with the search tool, then report every finding with its source.',
  critic: 'critic: pass the notes only if every query has a finding with a source; list what fails.',
  writer: 'writer: write a short brief (title, markdown) answering the question from the checked findings.',
} as const;

/** The critic's verdict: `verdict.v1` with the coverage score. */
export const Critique = z.object({
  verdict: z.enum(['pass', 'fail']),
  scores: z.object({ coverage: z.number().min(0).max(1) }),
  failures: z.array(z.string().max(500)).max(10),
});

/** The researcher's MCP server: this directory's library-mcp, as source (through tsx) or built. */
export function libraryServer() {
  const file = path.join(__dirname, `library-mcp${path.extname(__filename)}`);
  const args = path.extname(__filename) === '.ts' ? ['--import', 'tsx', file] : [file];
  return { name: 'library', command: process.execPath, args, env: { PATH: process.env.PATH ?? '' } };
}

/** A model stage's model, or a typed refusal: these stages have no rule-based fallback. */
export function requireModel(model: ChatModel | undefined, stage: string): ChatModel {
  if (!model)
    throw stageFailure('ModelRejected', `${stage} is a model stage: set HANDRAIL_MODEL_BASE_URL (and HANDRAIL_MODEL)`);
  return model;
}

async function body<S extends z.ZodType>(store: Store, pkg: HandoffV1, stage: string, type: string, schema: S) {
  return readArtifactBody(store, requireArtifact(pkg, stage, type), schema);
}

export async function runPlanner(store: Store, model: ChatModel, pkg: HandoffV1, turn: StageTurn) {
  const ticket = await body(store, pkg, plannerStage.name, 'ticket.raw', TicketRaw);
  return runModelStage(store, model, pkg, turn, {
    card: plannerStage,
    system: SYSTEM.planner,
    question: `${ticket.subject}\n\n${ticket.body}`,
    output: { type: RESEARCH_PLAN, schema: ResearchPlan },
    summary: (plan) => `planned ${plan.queries.length} search(es): ${plan.queries.join('; ')}`,
  });
}

/** `approvals`: the researcher's grants asking a human first, by tool (`{ search: 'always' }`). */
export async function runResearcher(
  store: Store,
  model: ChatModel,
  pkg: HandoffV1,
  turn: StageTurn,
  approvals: Readonly<Record<string, ToolApproval>> = {},
) {
  const plan = await body(store, pkg, researcherStage.name, RESEARCH_PLAN, ResearchPlan);
  const tools = researcherStage.tools.map((t) => (approvals[t.name] ? { ...t, approval: approvals[t.name] } : t));
  return runModelStage(store, model, pkg, turn, {
    card: { ...researcherStage, tools },
    system: SYSTEM.researcher,
    question: `Question: ${plan.question}\nQueries:\n${plan.queries.map((q) => `- ${q}`).join('\n')}`,
    output: { type: RESEARCH_NOTES, schema: ResearchNotes },
    mcp: [libraryServer()],
    maxSteps: 4,
    summary: (notes) => `${notes.findings.length} finding(s) from the library`,
  });
}

export async function runCritic(store: Store, model: ChatModel, pkg: HandoffV1, turn: StageTurn) {
  const notes = await body(store, pkg, criticStage.name, RESEARCH_NOTES, ResearchNotes);
  const plan = await body(store, pkg, criticStage.name, RESEARCH_PLAN, ResearchPlan);
  const output = await runModelStage(store, model, pkg, turn, {
    card: criticStage,
    system: SYSTEM.critic,
    question: `Queries: ${canonicalJson(plan.queries)}\nNotes: ${canonicalJson(notes)}`,
    output: { type: 'verdict.v1', schema: Critique },
    summary: (v) => (v.verdict === 'pass' ? 'notes pass' : `notes fail: ${v.failures.join('; ')}`.slice(0, 300)),
  });
  const verdict = output.body as z.infer<typeof Critique>;
  return { ...output, evaluator: { last_verdict: verdict.verdict, failures: verdict.failures } };
}

/** Writes the brief behind a passing verdict (checked again here), once per job. */
export async function runWriter(
  store: Store,
  writes: Pick<Store, 'writeOnce'>,
  model: ChatModel,
  pkg: HandoffV1,
  turn: StageTurn,
): Promise<StageOutput> {
  const verdict = await body(store, pkg, writerStage.name, 'verdict.v1', Critique);
  if (verdict.verdict !== 'pass')
    throw stageFailure('VerdictNotPassing', `${writerStage.name}: the critic did not pass the notes`);
  const plan = await body(store, pkg, writerStage.name, RESEARCH_PLAN, ResearchPlan);
  const notes = await body(store, pkg, writerStage.name, RESEARCH_NOTES, ResearchNotes);
  const output = await runModelStage(store, model, pkg, turn, {
    card: writerStage,
    system: SYSTEM.writer,
    question: `Question: ${plan.question}\nFindings: ${canonicalJson(notes.findings)}`,
    output: { type: BRIEF, schema: Brief },
  });
  const brief = output.body as Brief;
  const receipt = await writeOnce(writes, writerStage, pkg, {
    reference: `briefs/${pkg.job_id}`,
    payload: canonicalJson(brief),
    text: brief.markdown,
  });
  return {
    ...output,
    receipt,
    tools_tried: [...(output.tools_tried ?? []), { name: 'briefs.write', ok: true }],
    summary: `brief "${brief.title}" written to ${receipt.reference} (${receipt.status})`,
  };
}
