/**
 * A pipeline: the stages of one kind of job, the routing table between them, the revisits the
 * critique loop may make, the package versions its stages read, and per-edge options.
 *
 * Pure data and pure functions, like the stage cards: the rail (workflow code) and the worker
 * both import it. `definePipeline` checks the whole definition at once and refuses to load with
 * every problem listed, so a broken pipeline never reaches a worker, let alone a job.
 */
import type { HandoffV1, LastVerdict } from './handoff';
import { HANDOFF_V1 } from './handoff';
import { isSlug } from './primitives';
import { checkStageRegistry, type StageCard, type StageRegistry } from './stages';
import { createHandoffRegistry, type HandoffVersion, type Upgrader, type VersionRegistry } from './versions';

/** What a routing rule may look at: the package, its newest artifact and verdict, and the
 * bodies the rail recorded from earlier stages (e.g. an intake artifact's fields). */
export interface RouteFacts {
  package: HandoffV1;
  /** Type of the newest artifact, the one the next stage works on. */
  newest: string | undefined;
  verdict: LastVerdict;
  /** The body the rail recorded with the newest artifact of `type` (what its stage reported), or undefined. */
  body(type: string): Record<string, unknown> | undefined;
}

interface RuleMatch {
  /** Type of the package's newest artifact. */
  after: string;
  verdict?: 'pass' | 'fail';
  /** A pure predicate over the facts; the first rule that matches decides. */
  when?: (facts: RouteFacts) => boolean;
}

/** A hop to a stage. `spendsRevision`: the hop is a revision paid from `revisions_remaining`;
 * with none left the job escalates instead. */
export interface HopRule extends RuleMatch {
  to: string;
  reason: string;
  spendsRevision?: boolean;
}

/** The job is done. */
export interface CompleteRule extends RuleMatch {
  complete: string;
}

export type RouteRule = HopRule | CompleteRule;

/** An edge that may revisit a stage already in the chain, and what bounds it: the wallet's
 * revisions, or a maximum number of times the edge may be taken in one job. */
export interface RevisitEdge {
  from: string;
  to: string;
  bound?: 'revisions' | { max: number };
}

/** Options of one edge. `handover` is the slot for the per-edge handover strategy (seed 000);
 * today every edge hands over the package's artifacts, which is all there is. */
export interface EdgeOptions {
  from: string;
  to: string;
  handover?: 'artifacts';
}

export interface PipelineSpec {
  /** Slug a job request names in `pipeline`; published as the `HandrailPipeline` search attribute. */
  name: string;
  description?: string;
  /** Artifact type of the job's first package (the ticket the client sends). */
  entry?: string;
  stages: readonly StageCard[];
  /** First match wins; order them from specific to general. */
  routes: readonly RouteRule[];
  revisits?: readonly RevisitEdge[];
  /** Stage a human's `revise` decision sends the job to (the drafter); no revise without one. */
  reviser?: string;
  /** Package versions beyond handoff.v1 and the upgraders between them. */
  versions?: { handoff?: readonly HandoffVersion[]; upgraders?: readonly Upgrader[] };
  edges?: readonly EdgeOptions[];
}

/** `N`: the pipeline's stage names, so the worker's activity map is checked against its cards. */
export interface Pipeline<N extends string = string> extends StageRegistry {
  /** Phantom: carries the stage names for StageNameOf. */
  readonly stageNames?: readonly N[];
  readonly cards: readonly (StageCard & { readonly name: N })[];
  readonly name: string;
  readonly description: string;
  readonly entry: string;
  readonly routes: readonly RouteRule[];
  readonly revisits: readonly Required<RevisitEdge>[];
  readonly reviser: string | undefined;
  readonly versions: VersionRegistry;
  readonly edges: readonly EdgeOptions[];
}

export type StageNameOf<P> = P extends Pipeline<infer N> ? N : never;

export const DEFAULT_ENTRY = 'ticket.raw';
/** The human may send work anywhere: the human is the loop's exit, not a stage in it. */
export const HUMAN = 'human';

export class PipelineDefinitionError extends Error {
  override readonly name = 'PipelineDefinitionError';
  constructor(
    readonly pipeline: string,
    readonly problems: readonly string[],
  ) {
    super(`pipeline "${pipeline}" refused (${problems.length} problem${problems.length === 1 ? '' : 's'}):\n- ${problems.join('\n- ')}`);
  }
}

export const isCompleteRule = (rule: RouteRule): rule is CompleteRule => 'complete' in rule;

const describeRule = (rule: RouteRule, i: number) =>
  `route ${i + 1} (after ${rule.after}${rule.verdict ? `, verdict ${rule.verdict}` : ''}${rule.when ? ', when …' : ''})`;

/** Every problem with a pipeline definition, as sentences an author can act on; empty means sound. */
export function checkPipeline(spec: PipelineSpec): string[] {
  const problems: string[] = [];
  const entry = spec.entry ?? DEFAULT_ENTRY;
  if (!isSlug(spec.name)) problems.push(`pipeline name ${JSON.stringify(spec.name)} is not a lowercase slug`);
  if (!isSlug(entry)) problems.push(`entry artifact type ${JSON.stringify(entry)} is not a slug`);
  // Stage-level problems (two writers of one system, a judge with a write tool, …).
  problems.push(...checkStageRegistry(spec.stages, [entry]));
  const byName = new Map(spec.stages.map((c) => [c.name, c]));
  const produced = new Set([entry, ...spec.stages.flatMap((c) => c.outputs)]);

  spec.routes.forEach((rule, i) => {
    const at = describeRule(rule, i);
    if (!produced.has(rule.after)) problems.push(`${at}: no stage produces ${rule.after} and it is not the entry type`);
    if (isCompleteRule(rule)) return;
    const to = byName.get(rule.to);
    if (!to) problems.push(`${at} goes to "${rule.to}", which is not a stage of this pipeline`);
    else if (!to.accepts.includes(rule.after)) problems.push(`${at} goes to "${rule.to}", which does not accept ${rule.after} (accepts ${to.accepts.join(' | ')})`);
  });

  // Reachability from the entry along the routing table: every stage reached, completion reached.
  const reached = new Set<string>();
  let completes = false;
  const seenTypes = new Set<string>();
  const queue = [entry];
  for (let type = queue.shift(); type !== undefined; type = queue.shift()) {
    if (seenTypes.has(type)) continue;
    seenTypes.add(type);
    for (const rule of spec.routes.filter((r) => r.after === type)) {
      if (isCompleteRule(rule)) {
        completes = true;
        continue;
      }
      const card = byName.get(rule.to);
      if (!card) continue;
      reached.add(card.name);
      queue.push(...card.outputs);
    }
  }
  for (const card of spec.stages) {
    // A fallback is reached through its primary's ACK timeout, not through the table.
    const isFallback = spec.stages.some((c) => c.fallback === card.name);
    if (!reached.has(card.name) && !isFallback) problems.push(`stage "${card.name}" is reached by no route from ${entry}`);
  }
  if (!completes) problems.push(`no route from ${entry} leads to completion (add a rule with \`complete\`)`);

  for (const edge of spec.revisits ?? []) {
    const at = `revisit edge ${edge.from} → ${edge.to}`;
    for (const end of [edge.from, edge.to]) if (!byName.has(end)) problems.push(`${at} names "${end}", which is not a stage of this pipeline`);
    if (edge.bound === undefined) problems.push(`${at} has no bound: say 'revisions' or { max: n }`);
    else if (edge.bound !== 'revisions' && !(Number.isInteger(edge.bound.max) && edge.bound.max >= 1)) {
      problems.push(`${at} has bound max ${String(edge.bound.max)}; it must be an integer >= 1`);
    }
  }

  const reviser = spec.reviser === undefined ? undefined : byName.get(spec.reviser);
  if (spec.reviser !== undefined && !reviser) problems.push(`reviser "${spec.reviser}" is not a stage of this pipeline`);
  if (reviser && reviser.role !== 'worker') problems.push(`reviser "${reviser.name}" is a ${reviser.role}; a human's revise sends work to a worker (the drafter)`);

  const versions = new Set([HANDOFF_V1, ...(spec.versions?.handoff ?? []).map((v) => v.schema)]);
  for (const card of spec.stages) {
    for (const v of card.packageVersions) if (!versions.has(v)) problems.push(`stage "${card.name}" reads ${v}, which this pipeline does not declare`);
  }
  for (const u of spec.versions?.upgraders ?? []) {
    if (!versions.has(u.from) || !versions.has(u.to)) problems.push(`upgrader ${u.from} → ${u.to} names a version this pipeline does not declare`);
  }

  const routed = new Set(spec.routes.filter((r): r is HopRule => !isCompleteRule(r)).flatMap((r) => spec.stages.filter((c) => c.outputs.includes(r.after)).map((c) => `${c.name}→${r.to}`)));
  for (const edge of spec.edges ?? []) {
    if (!routed.has(`${edge.from}→${edge.to}`)) problems.push(`edge options for ${edge.from} → ${edge.to}: no route takes that edge`);
  }
  return problems;
}

/** A checked, frozen pipeline; throws PipelineDefinitionError listing every problem. */
export function definePipeline<C extends StageCard>(spec: PipelineSpec & { stages: readonly C[] }): Pipeline<C['name']> {
  const problems = checkPipeline(spec);
  if (problems.length > 0) throw new PipelineDefinitionError(spec.name, problems);
  const versions = createHandoffRegistry();
  for (const v of spec.versions?.handoff ?? []) versions.register(v);
  for (const u of spec.versions?.upgraders ?? []) versions.addUpgrader(u);
  const byName = new Map(spec.stages.map((c) => [c.name, c]));
  return Object.freeze({
    name: spec.name,
    description: spec.description ?? '',
    entry: spec.entry ?? DEFAULT_ENTRY,
    cards: spec.stages,
    get: (name: string) => byName.get(name),
    routes: spec.routes,
    // checkPipeline refused any edge without a bound.
    revisits: (spec.revisits ?? []) as readonly Required<RevisitEdge>[],
    reviser: spec.reviser,
    versions,
    edges: spec.edges ?? [],
  });
}

/** The pipeline a job names (the first one when it names none), or undefined. */
export function findPipeline(pipelines: readonly Pipeline[], name: string | undefined): Pipeline | undefined {
  return name === undefined ? pipelines[0] : pipelines.find((p) => p.name === name);
}

/** The rule that decides where a package goes next, or undefined. */
export function matchRoute(pipeline: Pick<Pipeline, 'routes'>, facts: RouteFacts): RouteRule | undefined {
  return pipeline.routes.find((r) => r.after === facts.newest && (r.verdict === undefined || r.verdict === facts.verdict) && (r.when === undefined || r.when(facts)));
}
