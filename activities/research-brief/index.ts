/** The research-brief pipeline's stage work (contracts/pipelines/research-brief.ts has its cards).
 * Every stage is a model stage: without the worker's model (`HANDRAIL_MODEL_*`) they fail ModelRejected. */
import type { Pipeline, ToolApproval } from '../../contracts';
import { researchBrief } from '../../contracts/pipelines/research-brief';
import { stageActivities, turnOptions, writesOf, type ActivityDeps } from '../../src';
import { requireModel, runCritic, runPlanner, runResearcher, runWriter } from './stages';

/** The stages' activities for `pipeline` (research-brief, or a variant with other edges). */
export function researchBriefActivities(
  deps: ActivityDeps,
  pipeline: Pipeline = researchBrief,
  options: { approvals?: Readonly<Record<string, ToolApproval>> } = {},
) {
  const { store } = deps;
  const model = (stage: string) => requireModel(deps.model, stage);
  return stageActivities(
    pipeline,
    store,
    {
      planner: (pkg, turn) => runPlanner(store, model('planner'), pkg, turn),
      researcher: (pkg, turn) => runResearcher(store, model('researcher'), pkg, turn, options.approvals),
      critic: (pkg, turn) => runCritic(store, model('critic'), pkg, turn),
      writer: (pkg, turn) => runWriter(store, writesOf(deps), model('writer'), pkg, turn),
    },
    turnOptions(deps),
  );
}
