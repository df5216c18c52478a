/**
 * A pipeline: the stages of one kind of job, the routing table between them, the revisits the
 * critique loop may make, the package versions its stages read, and per-edge options.
 *
 * Pure data and pure functions, like the stage cards: the rail (workflow code) and the worker
 * both import it. `definePipeline` checks the whole definition at once and refuses to load with
 * every problem listed, so a broken pipeline never reaches a worker, let alone a job.
 */
import type { HandoffReason, HandoffV1, LastVerdict } from './handoff';
import type { Message, TaggedMessage } from './transcript';
import { HANDOFF_REASONS, HANDOFF_V1, isSlug } from './names';
import { entryProblems, type EntrySpec } from './pipeline-entry';
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
  /** The typed reason, put on the hop block (`hop.handoff_reason`). */
  handoff?: HandoffReason;
  spendsRevision?: boolean;
}

/** The job is done. */
export interface CompleteRule extends RuleMatch {
  complete: string;
}

/**
 * A hub with parallel specialists: the package goes to every stage in `fanOut` at once.
 * Each specialist owns a partition — the artifact types it emits, which no other specialist of
 * the fan-out may emit — so their outputs never collide. When all have answered, the rail merges
 * their artifacts into one artifact of type `merge`, recorded once per job under
 * `job_id:merge:<merge>`, and routing goes on from that type. A branch that is refused or fails
 * escalates the job with the branch named; the others' work is kept for the retry.
 */
export interface FanOutRule extends RuleMatch {
  fanOut: readonly string[];
  merge: string;
  reason: string;
  /** The branches' typed reason; unset, `specialization` (what a fan-out to specialists is). */
  handoff?: HandoffReason;
}

export type RouteRule = HopRule | CompleteRule | FanOutRule;

/** The rail's merge step: its name in hop chains, acks and record keys (`job_id:merge:<type>`);
 * no stage of a pipeline with a fan-out may take it. */
export const MERGE_STAGE = 'merge';

/** An edge that may revisit a stage already in the chain, and what bounds it: the wallet's
 * revisions, or a maximum number of times the edge may be taken in one job. */
export interface RevisitEdge {
  from: string;
  to: string;
  bound?: 'revisions' | { max: number };
}

/** The transcript strategies: the earlier conversation inlined before or after the next
 * stage's question, or written to a trace file the question points at. */
export const HANDOVER_STRATEGIES = ['transcript_prepend', 'transcript_append', 'transcript_materialize'] as const;
export type HandoverStrategy = (typeof HANDOVER_STRATEGIES)[number];

/** What a callable handover sees besides the log: the job and the edge being crossed. */
export interface HandoverState {
  job_id: string;
  pipeline: string;
  from: string;
  to: string;
  /** The hop count of the delivery: the turn the next stage takes. */
  turn: number;
  package: HandoffV1;
}

/** Rewrites the log into the next stage's conversation history (a callable handover). */
export type HandoverCallable = (log: readonly TaggedMessage[], state: HandoverState) => Message[];

/**
 * Options of one edge: what conversation the next stage sees (its handover). Unset, the
 * next stage starts clean with only the package. `history`: the job's messages
 * as they are. A strategy renders them as a transcript. `{ callable }`: a function registered in
 * the pipeline's `handovers` (workflow code carries only its name).
 *
 * `maxTokens` caps what the handover puts before the model (the package stays small,
 * the full transcript stays in the store). Over it, `overflow: 'transcript_materialize'` writes
 * the transcript to a trace file instead; `'refuse'` (the default) refuses the hop
 * (`rejected_budget`, reason `context_budget_exceeded`). Never silently truncated.
 */
export interface EdgeOptions {
  from: string;
  to: string;
  handover?: HandoverStrategy | 'history' | { callable: string };
  maxTokens?: number;
  overflow?: 'transcript_materialize' | 'refuse';
}

/** An edge as a defined pipeline holds it: a callable handover resolved from `handovers`. */
export interface Edge extends EdgeOptions {
  readonly callable?: HandoverCallable;
}

/** A `{ callable: name }` handover (checkPipeline refused any other object). */
export const isCallable = (handover: EdgeOptions['handover']): handover is { callable: string } =>
  typeof handover === 'object' && handover !== null;

/** An edge's options as data (what the rail sends a stage): its callable left to the stage's worker. */
export const edgeOptions = ({ from, to, handover, maxTokens, overflow }: EdgeOptions): EdgeOptions => ({
  from,
  to,
  ...(handover === undefined ? {} : { handover: isCallable(handover) ? { callable: handover.callable } : handover }),
  ...(maxTokens === undefined ? {} : { maxTokens }),
  ...(overflow === undefined ? {} : { overflow }),
});

/** Problems with edge options a stage received (the rail only sends checked ones). */
export const edgeProblems = (edge: EdgeOptions, handovers: Readonly<Record<string, HandoverCallable>>) =>
  checkHandover(`edge ${edge.from} → ${edge.to}`, edge, handovers);

/** How a handover is named on acks, details and logs: the strategy, `history`, or `callable:<name>`. */
export const handoverName = (edge: Pick<EdgeOptions, 'handover'> | undefined): string | undefined =>
  edge?.handover === undefined
    ? undefined
    : isCallable(edge.handover)
      ? `callable:${edge.handover.callable}`
      : edge.handover;

export interface PipelineSpec {
  /** Slug a job request names in `pipeline`; published as the `HandrailPipeline` search attribute. */
  name: string;
  description?: string;
  /** The job's first package: its artifact type and the schema of the request's `entry`. */
  entry: EntrySpec;
  stages: readonly StageCard[];
  /** First match wins; order them from specific to general. */
  routes: readonly RouteRule[];
  revisits?: readonly RevisitEdge[];
  /** Stage a human's `revise` decision sends the job to (the drafter); no revise without one. */
  reviser?: string;
  /** Package versions beyond handoff.v1 and the upgraders between them. */
  versions?: { handoff?: readonly HandoffVersion[]; upgraders?: readonly Upgrader[] };
  edges?: readonly EdgeOptions[];
  /** Callable handovers by name, for edges that say `handover: { callable: name }`. */
  handovers?: Readonly<Record<string, HandoverCallable>>;
}

/** `N`: the pipeline's stage names, so the worker's activity map is checked against its cards. */
export interface Pipeline<N extends string = string> extends StageRegistry {
  /** Phantom: carries the stage names for StageNameOf. */
  readonly stageNames?: readonly N[];
  readonly cards: readonly (StageCard & { readonly name: N })[];
  readonly name: string;
  readonly description: string;
  /** Artifact type of the job's first package. */
  readonly entry: string;
  /** The entry as declared: its schema and memory refs (the rail checks a request's entry by it). */
  readonly entrySpec: EntrySpec;
  readonly routes: readonly RouteRule[];
  readonly revisits: readonly Required<RevisitEdge>[];
  readonly reviser: string | undefined;
  readonly versions: VersionRegistry;
  readonly edges: readonly Edge[];
  /** The options of the edge `from → to`, or undefined (the next stage gets only the package). */
  edge(from: string, to: string): Edge | undefined;
  /** Callable handovers by name (the rail sends the name; the stage's worker calls the function). */
  readonly handovers: Readonly<Record<string, HandoverCallable>>;
}

export type StageNameOf<P> = P extends Pipeline<infer N> ? N : never;

/** The human may send work anywhere: the human is the loop's exit, not a stage in it. */
export const HUMAN = 'human';

export class PipelineDefinitionError extends Error {
  override readonly name = 'PipelineDefinitionError';
  constructor(
    readonly pipeline: string,
    readonly problems: readonly string[],
  ) {
    super(
      `pipeline "${pipeline}" refused (${problems.length} problem${problems.length === 1 ? '' : 's'}):\n- ${problems.join('\n- ')}`,
    );
  }
}

export const isCompleteRule = (rule: RouteRule): rule is CompleteRule => 'complete' in rule;
export const isFanOutRule = (rule: RouteRule): rule is FanOutRule => 'fanOut' in rule;

/** The declared entry type, whatever else is wrong with the declaration (checkPipeline lists that). */
const entryType = (spec: Pick<PipelineSpec, 'entry'>): string =>
  String((spec.entry as Partial<EntrySpec> | undefined)?.type ?? '(no entry)');

const describeRule = (rule: RouteRule, i: number) =>
  `route ${i + 1} (after ${rule.after}${rule.verdict ? `, verdict ${rule.verdict}` : ''}${rule.when ? ', when …' : ''})`;

/** Every problem with a pipeline definition, as sentences an author can act on; empty means sound. */
export function checkPipeline(spec: PipelineSpec): string[] {
  const problems: string[] = [];
  const entry = entryType(spec);
  if (!isSlug(spec.name)) problems.push(`pipeline name ${JSON.stringify(spec.name)} is not a lowercase slug`);
  problems.push(...entryProblems(spec.entry));
  const fanOuts = spec.routes.filter(isFanOutRule);
  // Stage-level problems (two writers of one system, a judge with a write tool, …); a merged
  // type is made by the rail, so a stage may take it like the entry.
  problems.push(...checkStageRegistry(spec.stages, [entry, ...fanOuts.map((r) => r.merge)]));
  const byName = new Map(spec.stages.map((c) => [c.name, c]));
  const produced = new Set([entry, ...spec.stages.flatMap((c) => c.outputs), ...fanOuts.map((r) => r.merge)]);
  fanOuts.forEach((rule) => problems.push(...checkFanOut(rule, spec, byName)));
  // Provenance takes a `merge` record as a fan-out's: no stage of any pipeline may record as one.
  if (byName.has(MERGE_STAGE)) problems.push(`stage "${MERGE_STAGE}" is the rail's merge step; rename the stage`);

  spec.routes.forEach((rule, i) => {
    const at = describeRule(rule, i);
    if (!produced.has(rule.after)) problems.push(`${at}: no stage produces ${rule.after} and it is not the entry type`);
    if (isCompleteRule(rule)) return;
    if (rule.handoff !== undefined && !(HANDOFF_REASONS as readonly unknown[]).includes(rule.handoff)) {
      problems.push(`${at} has handoff ${JSON.stringify(rule.handoff)}; use one of ${HANDOFF_REASONS.join(', ')}`);
    }
    if (isFanOutRule(rule)) return;
    const to = byName.get(rule.to);
    if (!to) problems.push(`${at} goes to "${rule.to}", which is not a stage of this pipeline`);
    else if (!to.accepts.includes(rule.after))
      problems.push(
        `${at} goes to "${rule.to}", which does not accept ${rule.after} (accepts ${to.accepts.join(' | ')})`,
      );
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
      if (isFanOutRule(rule)) {
        // The specialists' outputs are merged, never routed: routing goes on from the merge.
        for (const name of rule.fanOut) if (byName.has(name)) reached.add(name);
        queue.push(rule.merge);
        continue;
      }
      const card = byName.get(rule.to);
      if (!card) continue;
      reached.add(card.name);
      queue.push(...card.outputs);
    }
  }
  for (const card of spec.stages) {
    // A fallback is reached through its primary's ACK timeout, a return-to-sender target through
    // its sender's card, not through the table.
    const isFallback = spec.stages.some(
      (c) =>
        c.fallback === card.name ||
        (typeof c.onTargetUnavailable === 'object' && c.onTargetUnavailable?.to === card.name),
    );
    if (!reached.has(card.name) && !isFallback)
      problems.push(`stage "${card.name}" is reached by no route from ${entry}`);
  }
  if (!completes) problems.push(`no route from ${entry} leads to completion (add a rule with \`complete\`)`);

  for (const edge of spec.revisits ?? []) {
    const at = `revisit edge ${edge.from} → ${edge.to}`;
    for (const end of [edge.from, edge.to])
      if (!byName.has(end)) problems.push(`${at} names "${end}", which is not a stage of this pipeline`);
    if (edge.bound === undefined) problems.push(`${at} has no bound: say 'revisions' or { max: n }`);
    else if (edge.bound !== 'revisions' && !(Number.isInteger(edge.bound.max) && edge.bound.max >= 1)) {
      problems.push(`${at} has bound max ${String(edge.bound.max)}; it must be an integer >= 1`);
    }
  }

  const reviser = spec.reviser === undefined ? undefined : byName.get(spec.reviser);
  if (spec.reviser !== undefined && !reviser)
    problems.push(`reviser "${spec.reviser}" is not a stage of this pipeline`);
  if (reviser && reviser.role !== 'worker')
    problems.push(
      `reviser "${reviser.name}" is a ${reviser.role}; a human's revise sends work to a worker (the drafter)`,
    );

  const versions = new Set([HANDOFF_V1, ...(spec.versions?.handoff ?? []).map((v) => v.schema)]);
  for (const card of spec.stages) {
    for (const v of card.packageVersions)
      if (!versions.has(v)) problems.push(`stage "${card.name}" reads ${v}, which this pipeline does not declare`);
  }
  for (const u of spec.versions?.upgraders ?? []) {
    if (!versions.has(u.from) || !versions.has(u.to))
      problems.push(`upgrader ${u.from} → ${u.to} names a version this pipeline does not declare`);
  }

  const targets = (r: RouteRule) => (isCompleteRule(r) ? [] : isFanOutRule(r) ? r.fanOut : [r.to]);
  const routed = new Set(
    spec.routes.flatMap((r) =>
      spec.stages.filter((c) => c.outputs.includes(r.after)).flatMap((c) => targets(r).map((to) => `${c.name}→${to}`)),
    ),
  );
  const seenEdges = new Set<string>();
  for (const edge of spec.edges ?? []) {
    const at = `edge ${edge.from} → ${edge.to}`;
    if (!routed.has(`${edge.from}→${edge.to}`))
      problems.push(`edge options for ${edge.from} → ${edge.to}: no route takes that edge`);
    if (seenEdges.has(`${edge.from}→${edge.to}`)) problems.push(`${at} has options twice; give each edge one entry`);
    seenEdges.add(`${edge.from}→${edge.to}`);
    problems.push(...checkHandover(at, edge, spec.handovers ?? {}));
  }
  return problems;
}

/** A fan-out's problems: its specialists exist, take the package, are workers, and own disjoint
 * partitions; the merged type is new. */
function checkFanOut(rule: FanOutRule, spec: PipelineSpec, byName: ReadonlyMap<string, StageCard>): string[] {
  const problems: string[] = [];
  const at = `fan-out after ${rule.after}`;
  const names = Array.isArray(rule.fanOut) ? rule.fanOut : [];
  if (names.length < 2)
    problems.push(`${at} names ${names.length} specialist(s); a fan-out needs at least two (one is a plain hop)`);
  if (new Set(names).size !== names.length) problems.push(`${at} names a specialist twice`);
  const owner = new Map<string, string>();
  for (const name of new Set(names)) {
    const card = byName.get(name);
    if (!card) {
      problems.push(`${at} goes to "${name}", which is not a stage of this pipeline`);
      continue;
    }
    if (!card.accepts.includes(rule.after))
      problems.push(
        `${at} goes to "${name}", which does not accept ${rule.after} (accepts ${card.accepts.join(' | ')})`,
      );
    // A critic's verdict and a writer's write are single-file steps: two at once would race.
    if (card.role !== 'worker')
      problems.push(`${at}: specialist "${name}" is a ${card.role}; specialists that run at once must be workers`);
    // Branches at once share the wallet exactly only when each is held to a worst case.
    if (card.worstCaseCostUsd === undefined)
      problems.push(
        `${at}: specialist "${name}" declares no worstCaseCostUsd; a specialist that runs beside others is reserved and charged at most its worst case`,
      );
    for (const type of card.outputs) {
      const other = owner.get(type);
      if (other)
        problems.push(`${at}: "${other}" and "${name}" both own ${type}; the specialists' partitions must be disjoint`);
      else owner.set(type, name);
    }
  }
  if (!isSlug(rule.merge))
    problems.push(`${at} merges into ${JSON.stringify(rule.merge)}, which is not an artifact type slug`);
  const maker = spec.stages.find((c) => c.outputs.includes(rule.merge));
  if (maker || rule.merge === entryType(spec))
    problems.push(
      `${at} merges into ${rule.merge}, which ${maker ? `stage "${maker.name}" also emits` : 'is the entry type'}; the merge's type is its own`,
    );
  return problems;
}

function checkHandover(at: string, edge: EdgeOptions, handovers: Readonly<Record<string, HandoverCallable>>): string[] {
  const problems: string[] = [];
  const { from, to, handover, maxTokens, overflow } = edge;
  if (typeof from !== 'string' || typeof to !== 'string') problems.push(`${at}: from and to must be stage names`);
  if (
    handover !== undefined &&
    typeof handover !== 'string' &&
    (handover === null || typeof handover !== 'object' || Array.isArray(handover))
  ) {
    problems.push(
      `${at}: handover must be a strategy name or { callable: name }, not ${handover === null ? 'null' : Array.isArray(handover) ? 'an array' : typeof handover}`,
    );
  } else if (
    typeof handover === 'string' &&
    handover !== 'history' &&
    !(HANDOVER_STRATEGIES as readonly string[]).includes(handover)
  ) {
    problems.push(
      `${at}: unknown handover strategy ${JSON.stringify(handover)} (known: history, ${HANDOVER_STRATEGIES.join(', ')}, or { callable: name })`,
    );
  } else if (handover !== undefined && typeof handover !== 'string') {
    const name = (handover as { callable?: unknown }).callable;
    if (typeof name !== 'string' || name.length === 0)
      problems.push(`${at}: a callable handover names its function: { callable: 'name' }`);
    else if (typeof handovers[name] !== 'function')
      problems.push(`${at}: handover callable ${JSON.stringify(name)} is not registered in the pipeline's handovers`);
  }
  if (maxTokens !== undefined) {
    if (!Number.isInteger(maxTokens) || maxTokens < 1)
      problems.push(`${at}: maxTokens ${String(maxTokens)} must be an integer >= 1`);
    if (handover === undefined)
      problems.push(`${at}: maxTokens caps a handover, and this edge has none (its next stage gets only the package)`);
  }
  if (overflow !== undefined && overflow !== 'transcript_materialize' && overflow !== 'refuse') {
    problems.push(`${at}: overflow ${JSON.stringify(overflow)} must be 'transcript_materialize' or 'refuse'`);
  }
  if (overflow !== undefined && maxTokens === undefined)
    problems.push(`${at}: overflow says what to do over maxTokens; set maxTokens`);
  return problems;
}

/** Callables live only in the process that defined them (workflow code carries the name): say so
 * once, where a process can hear it (the workflow sandbox has no process). */
function warnCallables(spec: PipelineSpec): void {
  const names = (spec.edges ?? []).flatMap((e) =>
    isCallable(e.handover) ? [`${e.from} → ${e.to} (${e.handover.callable})`] : [],
  );
  const host = (
    globalThis as { process?: { emitWarning?: (message: string, options: { type: string; code: string }) => void } }
  ).process;
  if (names.length > 0 && typeof host?.emitWarning === 'function') {
    host.emitWarning(
      `pipeline "${spec.name}": callable handover on ${names.join(', ')} cannot be serialised with the pipeline; every worker must define it`,
      {
        type: 'HandoverWarning',
        code: 'HANDRAIL_CALLABLE_HANDOVER',
      },
    );
  }
}

/** A checked, frozen pipeline; throws PipelineDefinitionError listing every problem. */
export function definePipeline<C extends StageCard>(
  spec: PipelineSpec & { stages: readonly C[] },
): Pipeline<C['name']> {
  const problems = checkPipeline(spec);
  if (problems.length > 0) throw new PipelineDefinitionError(spec.name, problems);
  const versions = createHandoffRegistry();
  for (const v of spec.versions?.handoff ?? []) versions.register(v);
  for (const u of spec.versions?.upgraders ?? []) versions.addUpgrader(u);
  const byName = new Map(spec.stages.map((c) => [c.name, c]));
  warnCallables(spec);
  const edges: Edge[] = (spec.edges ?? []).map((e) =>
    isCallable(e.handover) ? { ...e, callable: spec.handovers![e.handover.callable] } : e,
  );
  const byEdge = new Map(edges.map((e) => [`${e.from}→${e.to}`, e]));
  return Object.freeze({
    name: spec.name,
    description: spec.description ?? '',
    entry: spec.entry.type,
    entrySpec: spec.entry as EntrySpec,
    cards: spec.stages,
    get: (name: string) => byName.get(name),
    routes: spec.routes,
    // checkPipeline refused any edge without a bound.
    revisits: (spec.revisits ?? []) as readonly Required<RevisitEdge>[],
    reviser: spec.reviser,
    versions,
    edges,
    edge: (from: string, to: string) => byEdge.get(`${from}→${to}`),
    handovers: Object.freeze({ ...spec.handovers }),
  });
}

/** The pipeline a job names (the first one when it names none), or undefined. */
export function findPipeline(pipelines: readonly Pipeline[], name: string | undefined): Pipeline | undefined {
  return name === undefined ? pipelines[0] : pipelines.find((p) => p.name === name);
}

/** The rule that decides where a package goes next, or undefined. */
export function matchRoute(pipeline: Pick<Pipeline, 'routes'>, facts: RouteFacts): RouteRule | undefined {
  return pipeline.routes.find(
    (r) =>
      r.after === facts.newest &&
      (r.verdict === undefined || r.verdict === facts.verdict) &&
      (r.when === undefined || r.when(facts)),
  );
}
