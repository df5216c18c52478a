/** retrieve: `intake.v1` → `chunks.v1` (help-center passages with citation keys) or `no_hit.v1`. */
import { toolCall, toolResult, type HandoffV1, type StageCard } from '../../contracts';
import { ChunksV1, NoHitV1 } from '../../contracts/pipelines/ticket-artifacts';
import { retrieveStage } from '../../contracts/pipelines/ticket-triage';
import { searchTerms, type Store, writeArtifact, type StageOutput, type StageTurn } from '../../src';
import { readIntake } from './retrieval';

/** Passages handed to the drafter: enough to cite, few enough to keep the package small. */
export const RETRIEVE_LIMIT = 4;

/** `card`: the stage this work runs as (ticket-hub's `policy` does the same search under its own card). */
export async function runRetrieve(
  store: Store,
  pkg: HandoffV1,
  turn: StageTurn,
  card: Pick<StageCard, 'name' | 'nominalCostUsd'> = retrieveStage,
): Promise<StageOutput> {
  const intake = await readIntake(store, pkg, card.name);
  await turn.prompt({ question: `Find help-center passages for: ${intake.question}` });
  const terms = searchTerms(intake.question);
  const hits = terms.length > 0 ? await store.searchHelpCenter(terms, RETRIEVE_LIMIT) : [];
  if (terms.length > 0)
    turn.reply(
      toolCall('helpcenter.search', { terms, limit: RETRIEVE_LIMIT }),
      toolResult(hits.map((h) => `[${h.key}] ${h.title}`).join('\n') || 'no match'),
    );
  const tools_tried = terms.length > 0 ? [{ name: 'helpcenter.search', ok: true }] : [];

  if (hits.length === 0) {
    const body: NoHitV1 = {
      query: intake.question,
      reason:
        terms.length === 0
          ? 'the question has no searchable words'
          : `no help-center article matches: ${terms.join(' ')}`,
      terms,
    };
    return {
      artifact: await writeArtifact(store, 'no_hit.v1', NoHitV1, body),
      body,
      cost_usd: card.nominalCostUsd,
      tools_tried,
      summary: `no hit: ${body.reason}`,
    };
  }
  const body: ChunksV1 = {
    query: intake.question,
    terms,
    // Scores rounded so equal rankings give equal bytes (and one artifact address) across runs.
    chunks: hits.map((h) => ({ key: h.key, title: h.title, text: h.text, score: Math.round(h.score * 1e4) / 1e4 })),
    backend: store.backend,
  };
  const summary = `${hits.length} chunk${hits.length === 1 ? '' : 's'}: ${hits.map((h) => h.key).join(', ')}`;
  return {
    artifact: await writeArtifact(store, 'chunks.v1', ChunksV1, body),
    body,
    cost_usd: card.nominalCostUsd,
    tools_tried,
    summary,
  };
}
