/**
 * `--pipelines` variant for `replay --diff`: ticket-triage with a routing change — a draft
 * completes the job instead of going to the judge (the rule ahead of the judge's shadows it).
 */
import { builtInActivities } from '../../../activities/built-in';
import { definePipeline } from '../../../contracts';
import { BUILT_IN_PIPELINES, ticketTriage } from '../../../contracts/pipelines';

const skipJudge = definePipeline({
  name: ticketTriage.name,
  entry: ticketTriage.entrySpec,
  stages: ticketTriage.cards,
  routes: [{ after: 'summary_md', complete: 'published without a judge' }, ...ticketTriage.routes],
  revisits: ticketTriage.revisits,
  ...(ticketTriage.reviser ? { reviser: ticketTriage.reviser } : {}),
});

export const pipelines = [skipJudge, ...BUILT_IN_PIPELINES.filter((p) => p !== ticketTriage)];
export const activities = builtInActivities;
