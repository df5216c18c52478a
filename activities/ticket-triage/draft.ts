/**
 * draft: `chunks.v1` | `no_hit.v1` (or the judge's failing `verdict.v1`, for a revision) →
 * `summary_md`. Offline by default; a configured chat model writes the prose instead, and the
 * judge's rules apply to it all the same. `writeSummary` writes ticket-hub's brief too.
 */
import { assistantMessage, LIMITS, SummaryMd, type HandoffV1, type StageCard } from '../../contracts';
import {
  redactPersonalDataFor,
  type ChatModel,
  type Store,
  jobArtifacts,
  readArtifactBody,
  writeArtifact,
  type StageOutput,
  type StageTurn,
  askModel,
} from '../../src';
import { draftStage } from '../../contracts/pipelines/ticket-triage';
import { offlineDraft, type DraftInput } from './drafter';
import { readIntake, readRetrieval } from './retrieval';
import { SUMMARY_MAX_CHARS, citedKeys } from './summary-policy';

export async function runDraft(
  store: Store,
  model: ChatModel | undefined,
  pkg: HandoffV1,
  turn: StageTurn,
): Promise<StageOutput> {
  const intake = await readIntake(store, pkg, draftStage.name);
  const retrieval = await readRetrieval(store, pkg, draftStage.name);
  return writeSummary(store, model, draftStage, pkg, turn, { intake, retrieval });
}

/**
 * The summary a drafting stage writes from what it read (the intake, the retrieval, any context
 * lines), as `card`: ticket-triage's draft, or ticket-hub's brief from its merged research. A
 * revision reads the judge's failures and every rejected draft from the package.
 */
export async function writeSummary(
  store: Store,
  model: ChatModel | undefined,
  card: Pick<StageCard, 'nominalCostUsd'>,
  pkg: HandoffV1,
  turn: StageTurn,
  sources: Pick<DraftInput, 'intake' | 'retrieval' | 'context'>,
): Promise<StageOutput> {
  // Every earlier draft was rejected (a revision only follows a failing verdict); the new one
  // must differ from all of them, not just the last.
  const rejected = await Promise.all(
    (await jobArtifacts(store, pkg))
      .filter((a) => a.type === 'summary_md')
      .map(async (a) => (await readArtifactBody(store, a, SummaryMd)).markdown),
  );
  const input: DraftInput = {
    ...sources,
    failures: pkg.evaluator.last_verdict === 'fail' ? pkg.evaluator.failures : [],
    rejected,
  };

  // The model gets exactly what the edge's handover made of this prompt.
  const { messages } = await turn.prompt(draftPrompt(input, pkg.constraints));
  let markdown: string;
  let cost: number;
  if (model) {
    const reply = await askModel(model, messages, { maxTokens: 800 });
    markdown =
      redactPersonalDataFor(pkg.constraints, reply.text.trim().slice(0, LIMITS.markdown - 100)) ||
      '(the model returned an empty draft)';
    if (rejected.includes(markdown)) markdown = `${markdown}\n\n_Revision ${rejected.length}._`;
    cost = reply.cost_usd;
  } else {
    markdown = redactPersonalDataFor(pkg.constraints, offlineDraft(input));
    cost = card.nominalCostUsd;
  }
  turn.reply(assistantMessage(markdown));
  const body: SummaryMd = { markdown, cited_keys: citedKeys(markdown), revision: rejected.length };
  const cites =
    body.cited_keys.length > 0
      ? `citing ${body.cited_keys.join(', ')}`
      : `citing nothing${/\bno_match\b/.test(markdown) ? ' (no_match)' : ''}`;
  const summary = `draft revision ${body.revision} (${model ? 'model' : 'offline'}, ${markdown.length} characters) ${cites}`;
  return { artifact: await writeArtifact(store, 'summary_md', SummaryMd, body), body, cost_usd: cost, summary };
}

function draftPrompt(input: DraftInput, constraints: readonly string[]): { system: string; question: string } {
  const passages =
    input.retrieval.kind === 'chunks'
      ? input.retrieval.chunks.map((c) => `[${c.key}] ${c.title}: ${c.text}`).join('\n')
      : `(none: ${input.retrieval.reason})`;
  const system = [
    'You write internal triage summaries for support agents. The customer never sees them.',
    'Cite every help-center passage you use by its key in square brackets, e.g. [refund-policy.2]; cite only keys listed below.',
    'If no passage is listed, write "no_match" and recommend escalation to a human.',
    'Never promise a refund or any outcome the billing team decides. Quote the customer only in a markdown blockquote ("> ...").',
    `Markdown, at most ${SUMMARY_MAX_CHARS} characters. Job constraints: ${constraints.join('; ') || 'none'}.`,
  ].join('\n');
  const user = [
    `Ticket ${input.intake.ticket_id}, customer ${input.intake.customer_id}.`,
    `Question: ${input.intake.question}`,
    `Intent ${input.intake.intent}, risk ${input.intake.risk}, sentiment ${input.intake.sentiment}, language ${input.intake.language}.`,
    ...(input.context ?? []),
    `Help-center passages:\n${passages}`,
    ...(input.failures.length > 0
      ? [`The reviewer rejected the previous draft for: ${input.failures.join('; ')}. Fix every point.`]
      : []),
    ...(input.rejected.length > 0
      ? [`Rejected draft (do not repeat it):\n${input.rejected[input.rejected.length - 1]}`]
      : []),
  ].join('\n\n');
  return { system, question: user };
}
