/**
 * `handrail/workflow` — `createRail(pipelines)`: the rail's workflows for a set of pipelines.
 * Sandbox-safe: the worker's workflow module (the plugin's `workflowsPath`) exports what this
 * returns, and imports nothing else of handrail's but `handrail/contracts`, e.g.
 *
 *   import { createRail } from 'handrail/workflow';
 *   import { pipelines } from './pipelines';
 *   export const { handoffJob, stageHop } = createRail(pipelines);
 *
 * A job or a direct delivery names its pipeline (`pipeline` in the request); the first one is
 * the default. Stage activities are proxied once here, not per hop.
 */
import type { Pipeline } from '../contracts/rail';
import { createHandoffJob } from './handoff-job';
import type { RailPipelines } from './job/request';
import { proxyStages } from './run-hop';
import { createStageHop } from './stage-hop';

export function createRail(pipelines: readonly Pipeline[]) {
  const names = pipelines.map((p) => p.name);
  const twice = names.filter((n, i) => names.indexOf(n) !== i);
  if (pipelines.length === 0) throw new Error('createRail needs at least one pipeline');
  if (twice.length > 0) throw new Error(`createRail: pipeline ${twice.map((n) => `"${n}"`).join(', ')} listed twice`);
  const rail: RailPipelines = { pipelines, stages: new Map(pipelines.map((p) => [p.name, proxyStages(p)])) };
  return { handoffJob: createHandoffJob(rail), stageHop: createStageHop(rail) };
}
