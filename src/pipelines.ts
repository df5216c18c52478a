/**
 * `handrail/pipelines/worker`: the built-in pipelines as a worker runs them — one plugin with their
 * definitions, stage activities and workflow module. The shipped worker (`npm run worker`,
 * `npm run demo`) and the `handrail` CLI's defaults use it; a user's own worker can add the
 * built-ins next to their own pipelines the same way. The definitions alone (sandbox-safe, for a
 * workflow module) are `handrail/pipelines`.
 */
import { builtInActivities } from '../activities/built-in';
import { BUILT_IN_PIPELINES } from '../contracts/pipelines';
import path from 'node:path';
import type { DataConverter } from '@temporalio/common';
import type { ToolApproval } from '../contracts';
import { researchBriefActivities } from '../activities/research-brief';
import { HandrailPlugin } from './index';
import type { DiffPipelines } from './replay';

export { builtInActivities };
export { ticketTriageActivities } from '../activities/ticket-triage';
export { supportRoutingActivities } from '../activities/support-routing';
export { ticketHubActivities } from '../activities/ticket-hub';
export { researchBriefActivities } from '../activities/research-brief';
// The built-in pipelines' artifact schemas (zod: worker side, never in the workflow bundle).
export * from '../contracts/pipelines/ticket-artifacts';

/** A built-in module by its path from the code root: `.ts` from the sources, `.js` from the build. */
const builtInModule = (fromCodeRoot: string): string =>
  path.join(__dirname, '..', `${fromCodeRoot}${path.extname(__filename)}`);

/** The built-in pipelines' workflow module (`createRail(BUILT_IN_PIPELINES)`) and the modules
 * evaluated once per worker with it (their definitions: pure, stateless). */
export const BUILT_IN_WORKFLOWS = {
  workflowsPath: builtInModule('workflows/index'),
  preloadModules: [builtInModule('contracts/pipelines/index')],
} as const;

/** `handrail replay --diff`'s default: the built-in pipelines and their stages. */
export const BUILT_IN_DIFF: DiffPipelines = { pipelines: BUILT_IN_PIPELINES, activities: builtInActivities };

/** The plugin of the shipped worker: the built-in pipelines, the reference one first. */
export function builtInPlugin(
  options: {
    dataConverter?: DataConverter;
    /** The research-brief researcher's grants that ask a human first, by tool (`{ search: 'always' }`). */
    researchApprovals?: Readonly<Record<string, ToolApproval>>;
  } = {},
): HandrailPlugin<typeof BUILT_IN_PIPELINES> {
  const { researchApprovals, ...rest } = options;
  const approvals = researchApprovals;
  return new HandrailPlugin({
    pipelines: BUILT_IN_PIPELINES,
    activities: approvals
      ? (deps) => ({ ...builtInActivities(deps), ...researchBriefActivities(deps, undefined, { approvals }) })
      : builtInActivities,
    ...BUILT_IN_WORKFLOWS,
    preloadModules: [...BUILT_IN_WORKFLOWS.preloadModules],
    ...rest,
  });
}
