/**
 * `--pipelines` variant for `replay --diff`: the built-in pipelines, with a drafter whose offline
 * wording changed (one sentence added under every draft). Test-only: the shipped drafter is untouched.
 */
import { builtInActivities, type ActivityDeps } from '../../../activities/built-in';
import { writeArtifact } from '../../../activities/artifacts';
import { stageActivities } from '../../../activities/stage';
import { runDraft } from '../../../activities/ticket-triage/draft';
import { SummaryMd, type SummaryMd as SummaryBody } from '../../../contracts/artifacts';
import { BUILT_IN_PIPELINES, ticketTriage } from '../../../contracts/pipelines';

export const pipelines = BUILT_IN_PIPELINES;

export function activities(deps: ActivityDeps) {
  const draft = stageActivities(ticketTriage, deps.store, {
    draft: async (pkg, turn) => {
      const output = await runDraft(deps.store, undefined, pkg, turn);
      const body: SummaryBody = {
        ...(output.body as SummaryBody),
        markdown: `${(output.body as SummaryBody).markdown}\n\nDrafted by the triage rail.`,
      };
      return { ...output, body, artifact: await writeArtifact(deps.store, 'summary_md', SummaryMd, body) };
    },
  });
  return { ...builtInActivities(deps), ...draft };
}
