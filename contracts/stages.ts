/**
 * Stage cards: each stage's interface (what it accepts and outputs, its role and cost) as code, one card per stage.
 *
 * Imported by workflow code (the rail reads accepts/outputs/activity options from here) and by
 * the worker (which checks the registry before polling), so this file is pure data and pure
 * functions: no Node built-ins, no I/O. Temporal types are imported as types only.
 */
import type { Duration, RetryPolicy } from '@temporalio/common';
import type { WriteReceipt } from './artifacts';
import type { AckRecord, Artifact, HandoffV1 } from './handoff';
import type { EdgeOptions } from './pipeline';
import { LIMITS } from './limits';
import { HANDOFF_V1, isId, isSlug } from './names';

/** An agent identity: an id (one token in a transcript label, `[agent:role:type]`; never the user's
 * `__user__`, which no id can spell) of at most a stage name's length. */
export const isAgentId = (agent: string) => agent.length <= LIMITS.name && isId(agent);

/** What one stage activity receives (DESIGN "Stage activity contract"). */
export interface StageWork {
  /** The stage's card name (also the activity's name). */
  stage: string;
  package: HandoffV1;
  /** `job_id:stage:hop_count`; the stage records its result under it (first result wins). */
  delivery_key: string;
  /** The options of the edge the package was delivered over, when the job's pipeline has any:
   * the handover the stage's turn gets. A callable travels by name only. */
  edge?: EdgeOptions;
  /** Hook results: context the job's rail hands the stage beside the package (a decided
   * escalation record's delta). The stage's turn logs each as a message of origin
   * `hook_result` and hands it over as history, never as the user's words. */
  hook_results?: HookResult[];
  /** The rail asks the stage to move the job's inline entry (the first package's body) to
   * the store and emit its reference instead (contracts/entry.ts), so no later package carries it. */
  store_entry?: true;
  /** The rail's records as they stand when it schedules this delivery (its status and its acks
   * since the last delivery it scheduled): they ride in the history's scheduled event, where a
   * job's followers read them without asking the worker a query (src/stream/carried.ts). A stage
   * ignores them; a worker of an older build never sees the field. */
  rail?: CarriedProgress;
}

/** The rail's records on a delivery: `acks` replace the job's acks from index `acks_from` on
 * (the acks before it are those earlier deliveries carried). `status` is the `status` query's
 * answer at that moment (workflows/definitions.ts `JobStatusView`). */
export interface CarriedProgress {
  acks_from: number;
  acks: AckRecord[];
  status: Record<string, unknown>;
}

/** The hook result that carries a human's word on a write in doubt to the writer's retried hop:
 * its text is the decision's `in_doubt` and actor, as JSON. */
export const IN_DOUBT_DECIDED = 'write.in_doubt.decided';

export interface HookResult {
  /** What produced it, e.g. `handoff.decided`. */
  event: string;
  text: string;
}

/** What one stage activity returns; the same value is returned again for a repeated delivery. */
export interface StageResult {
  /** The emitted package: the input plus the new artifact ref (and open_questions /
   * tools_tried / evaluator updates). budget, hop, ack, job_id, goal and trace are untouched. */
  package: HandoffV1;
  /** The output artifact ref (also the last entry of package.artifacts). */
  artifact: Artifact;
  /** What this stage spent; the rail subtracts it from the wallet. */
  cost_usd: number;
  /** Small parsed output the rail may branch on, e.g. the verdict body. */
  body?: unknown;
  /** Set when the result was recorded by another delivery under the same key (a concurrent or
   * repeated one): `same` package (the rail acks `duplicate`) or a `different` one (the rail
   * acks `rejected_conflict`). Absent on the delivery that recorded it. */
  recorded_by_other?: 'same' | 'different';
  /** The handover this stage's turn got over the edge it was delivered on, when the
   * edge has one: the strategy used (after any overflow fallback) and its size in tokens. The
   * conversation itself stays in the store, referenced from package.memory_refs. */
  handover?: { used: string; tokens: number; fell_back?: boolean };
  /** A writer's write (the write-once helper's receipt, naming the card's system): the job's
   * result carries the newest. */
  receipt?: WriteReceipt;
}

/**
 * Business failures a stage throws as `ApplicationFailure.nonRetryable(message, type)`.
 * Retrying them cannot help (the input is wrong, not the weather), so every card lists them as
 * non-retryable and the rail escalates instead.
 */
export const STAGE_FAILURE_TYPES = [
  /** The delivery is not one this stage can work on (malformed package, wrong stage, no accepted artifact). */
  'StageInputInvalid',
  /** An input artifact is unreadable, fails its hash, or fails its body schema. */
  'ArtifactInvalid',
  /** The entry lacks ids or a question the job cannot invent (details carry the open questions
   * and the package with them listed, for the rail to escalate with). */
  'EntryFieldsMissing',
  /** A writer found no passing verdict for the newest work. */
  'VerdictNotPassing',
  /** The model endpoint refused the request (bad key, bad model name, malformed reply). */
  'ModelRejected',
  /** The model's answer fails the schema of the artifact the stage emits (or it gave none within
   * its steps): asking the same model the same prompt again is not a repair. */
  'ModelOutputInvalid',
  /** A model stage's next step could cost more than what is left of the hop's reservation (the
   * card's worstCaseCostUsd, else its nominal cost): the step was not taken. */
  'ReservationExhausted',
  /** A writer's earlier request may have reached its system (sent, no answer noted), and the
   * card's reconcile mode is `none`: only a human can say whether it happened (details: the evidence). */
  'WriteInDoubt',
  /** A writer's system refused the write for good (it answered, wrote nothing, and says sending it
   * again would not help: a 4xx such as 422). The refusal is noted on the effect ledger under the
   * write key; a retried writer answers it again and sends nothing. */
  'WriteRefused',
  /** The edge's handover is over its token cap and may not fall back (the rail acks rejected_budget). */
  'ContextBudgetExceeded',
  /** The edge's handover could not be made: its callable is missing, its workspace or trace
   * file cannot be written. Nothing was sent to a model. */
  'HandoverFailed',
  /** The remote A2A agent a stage delegated to ended its task failed, rejected or cancelled, or
   * refused the message: sending the same message again gets the same answer. */
  'RemoteTaskFailed',
  /** The remote agent's answer is not a valid artifact of the type the stage emits. */
  'RemoteOutputInvalid',
  /** The remote agent asks for input (or auth) the stage cannot give: a human answers, so the
   * rail escalates (details: the agent, its task and what it asks). */
  'RemoteInputRequired',
  /** A message to the remote agent may have started a task no one can find (sent, no answer
   * recorded, and the agent can neither list tasks nor dedupe message ids): sending again could
   * pay twice, so the rail escalates and a human asks the agent (details: agent, message, context). */
  'RemoteTaskInDoubt',
  /** The stage's loop stopped at a tool call its grant says a human must approve first (details:
   * `tool_call`, a ToolCallAwaiting): nothing of the call ran; its steps so far are checkpointed. */
  'ToolApprovalRequired',
] as const;
export type StageFailureType = (typeof STAGE_FAILURE_TYPES)[number];

/**
 * How a writer's system is reconciled when a write is in doubt (its request went out, and no
 * answer was noted: the worker died, the connection dropped after the system committed).
 */
export const RECONCILE_MODES = {
  idempotent: 'the system dedupes by the write key it is sent: resend',
  lookup: 'a read by the write key (or client reference) says whether it happened: adopt its reference, or send',
  none: 'it cannot be known: the job escalates to a human with the evidence, who says it happened or to send it',
} as const;
export type ReconcileMode = keyof typeof RECONCILE_MODES;

export interface ToolGrant {
  /** Tool name as it appears in `tools_tried`, e.g. `ledger.post`. */
  name: string;
  access: 'read' | 'write';
  /** External system the tool touches, e.g. `ledger`. */
  system: string;
  /** What one call costs (USD), charged to the job's wallet with the stage's model tokens. */
  usdPerCall?: number;
  /** Followers of the job see this tool's call arguments (its name, start and end they always
   * see). Off by default: arguments can hold what a follower should not read. */
  showArguments?: boolean;
  /** When a call of this tool waits for a human first: `'never'` (the default), `'always'`, or a
   * pure predicate over the call's arguments (`(args) => args.usd > 100`), checked in the worker.
   * A call that needs approval stops the stage's loop at that call (ToolApprovalRequired). */
  approval?: ToolApproval;
  /** A human approving a call of this tool may run it with other arguments (the worker checks them
   * against the tool's input schema); off by default: approve runs the call as the model made it. */
  approvalEdits?: boolean;
}

export type ToolApproval = 'always' | 'never' | ((args: unknown) => boolean);

/** The hook result that carries a human's word on one tool call to the stage's resumed hop: its
 * text is a `ToolApprovalDecided`, as JSON. */
export const TOOL_APPROVAL_DECIDED = 'tool.approval.decided';

export interface ToolApprovalDecided {
  /** The call's digest (toolCallDigest): the word holds for that call only. */
  digest: string;
  verdict: 'approve' | 'deny';
  actor: string;
  note?: string;
  /** The delivery key of the hop whose loop stopped at the call: its checkpointed steps resume. */
  resume_key: string;
  /** On an approve where the grant allows edits: the arguments the call runs with instead. */
  args?: Record<string, unknown>;
}

/** A tool call a stage's loop stopped at, waiting for a human (ToolApprovalRequired's details). */
export interface ToolCallAwaiting {
  name: string;
  call_id: string;
  args: unknown;
  digest: string;
  /** The delivery key whose checkpointed steps hold the call. */
  resume_key: string;
}

/** Per-stage activity options, shaped so the rail can pass them to `proxyActivities` as is. */
export interface StageActivityOptions {
  startToCloseTimeout: Duration;
  /** The ACK timeout: how long a hop may wait for a worker holding this stage's queue. */
  scheduleToStartTimeout: Duration;
  /** How soon a silent attempt counts as lost: a killed worker, or a completion the server never
   * got, is retried after this instead of after the whole startToCloseTimeout. The stage
   * activities heartbeat while they work. */
  heartbeatTimeout: Duration;
  retry: RetryPolicy;
}

/**
 * `worker` produces an artifact; `critic` judges one and may hold no write tools, so
 * it cannot act on what it judges; `writer` is the one stage that patches an external
 * system.
 */
export type StageRole = 'worker' | 'critic' | 'writer';

export interface StageCard {
  name: string;
  role: StageRole;
  /** The agent identity its messages carry in the job's log; unset,
   * the model's id (or the stage name when it runs offline). */
  agent?: string;
  /** Artifact types this stage can take: the rail acks `rejected_role` unless the newest
   * artifact on the package has one of these types. Types carry their version (`intake.v1`). */
  accepts: readonly string[];
  /** Package schema versions this stage reads. */
  packageVersions: readonly string[];
  /** Artifact types this stage may emit (retrieve emits `chunks.v1` or `no_hit.v1`). */
  outputs: readonly string[];
  tools: readonly ToolGrant[];
  /** The external system this stage writes, or null. */
  writes: string | null;
  /** How a write to that system is settled when it is in doubt (sent, no outcome noted): a
   * writer must declare it (RECONCILE_MODES), a stage that writes nothing must not. */
  reconcile?: ReconcileMode;
  /** What the evaluator checks on this stage's output, in words an operator reads. */
  criteria: readonly string[];
  /** Cost reported when the stage runs offline (no model behind it). */
  nominalCostUsd: number;
  /** The stage's worst-case cost: what the rail reserves from the wallet before the hop starts
   * (the hop is `rejected_budget` when it does not fit) and the most it settles; a stage that
   * reports more is charged this and the hop is flagged overspent. Unset: the nominal cost. */
  worstCaseCostUsd?: number;
  /** Own task queue, so only the worker holding this stage's credentials runs it. Unset: the
   * job's task queue, or the writers' queue for a stage that writes (stageTaskQueue). */
  taskQueue?: string;
  /** Stage tried when this one's ACK times out twice. */
  fallback?: string;
  /** Return to sender: what this stage does when the stage it hands to is not picked
   * up (after its retry and its fallback) and the package comes back (`target_unavailable`):
   * send it to another stage instead (`reroute`), or to one that does less (`degrade`). Unset or
   * `escalate`: a human decides, the reason named. */
  onTargetUnavailable?: 'escalate' | { action: 'reroute' | 'degrade'; to: string };
  activity: StageActivityOptions;
}

export type StageSpec = Omit<StageCard, 'role' | 'packageVersions' | 'tools' | 'writes' | 'activity'> & {
  role?: StageRole;
  packageVersions?: readonly string[];
  tools?: readonly ToolGrant[];
  writes?: string | null;
  activity?: Partial<Omit<StageActivityOptions, 'retry'>> & { retry?: RetryPolicy };
  /** @deprecated Use worstCaseCostUsd (the same number; defineStage reads either). */
  maxCostUsd?: number;
};

const DEFAULT_ACTIVITY: StageActivityOptions = {
  startToCloseTimeout: '30s',
  scheduleToStartTimeout: '1m',
  heartbeatTimeout: '10s',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s', maximumAttempts: 3 },
};

/** A card with defaults filled in (worker role, handoff.v1, no tools, no writes, 30 s / 3 tries,
 * 10 s heartbeat, business failures non-retryable). Validation happens in `checkStageRegistry`, which
 * definePipeline runs, so a bad card is refused with every other problem of its pipeline at once. */
export function defineStage<const N extends string>(spec: StageSpec & { name: N }): StageCard & { readonly name: N } {
  const retry = { ...DEFAULT_ACTIVITY.retry, ...spec.activity?.retry };
  const nonRetryable = new Set([...STAGE_FAILURE_TYPES, ...(retry.nonRetryableErrorTypes ?? [])]);
  const { maxCostUsd, ...card } = spec;
  const worstCaseCostUsd = spec.worstCaseCostUsd ?? maxCostUsd;
  return deepFreeze({
    ...card,
    ...(worstCaseCostUsd !== undefined ? { worstCaseCostUsd } : {}),
    role: spec.role ?? 'worker',
    packageVersions: spec.packageVersions ?? [HANDOFF_V1],
    tools: spec.tools ?? [],
    writes: spec.writes ?? null,
    activity: {
      startToCloseTimeout: spec.activity?.startToCloseTimeout ?? DEFAULT_ACTIVITY.startToCloseTimeout,
      scheduleToStartTimeout: spec.activity?.scheduleToStartTimeout ?? DEFAULT_ACTIVITY.scheduleToStartTimeout,
      heartbeatTimeout: spec.activity?.heartbeatTimeout ?? DEFAULT_ACTIVITY.heartbeatTimeout,
      retry: { ...retry, nonRetryableErrorTypes: [...nonRetryable] },
    },
  });
}

// ---------------------------------------------------------------------------------------------
// Registry check (definePipeline runs it; a pipeline with a bad card refuses to load).

/** Every problem with a set of cards, as sentences an operator can act on; empty means sound. */
export function checkStageRegistry(cards: readonly StageCard[], entryTypes: readonly string[]): string[] {
  const problems: string[] = [];
  const byName = new Map<string, StageCard>();
  for (const card of cards) {
    if (!isSlug(card.name))
      problems.push(
        `stage name ${JSON.stringify(card.name)} is not a lowercase slug of at most ${LIMITS.name} characters`,
      );
    if (byName.has(card.name)) problems.push(`stage "${card.name}" is defined twice`);
    if (card.agent !== undefined && !isAgentId(card.agent)) {
      problems.push(
        `stage "${card.name}" has agent ${JSON.stringify(card.agent)}: use letters, digits, _ . - (at most ${LIMITS.name}), starting with a letter or digit`,
      );
    }
    byName.set(card.name, card);
  }
  const produced = new Set(cards.flatMap((c) => c.outputs));
  const writersBySystem = new Map<string, string[]>();

  for (const card of cards) {
    const at = `stage "${card.name}"`;
    if (card.outputs.length === 0 || card.outputs.some((t) => !isSlug(t))) {
      problems.push(`${at} must name its output artifact type(s) as slugs (got ${JSON.stringify(card.outputs)})`);
    }
    if (card.accepts.length === 0) problems.push(`${at} accepts no input artifact type`);
    for (const type of card.accepts) {
      if (!produced.has(type) && !entryTypes.includes(type)) {
        problems.push(`${at} accepts "${type}", which no stage produces and is not an entry type`);
      }
    }
    if (card.packageVersions.length === 0) problems.push(`${at} accepts no package schema version`);
    if (!(Number.isFinite(card.nominalCostUsd) && card.nominalCostUsd >= 0)) {
      problems.push(`${at} has nominal cost ${card.nominalCostUsd}; it must be a finite number >= 0`);
    }
    if (
      card.worstCaseCostUsd !== undefined &&
      !(
        Number.isFinite(card.worstCaseCostUsd) &&
        card.worstCaseCostUsd >= card.nominalCostUsd &&
        card.worstCaseCostUsd <= LIMITS.usd
      )
    ) {
      problems.push(
        `${at} has max cost ${card.worstCaseCostUsd}; it must be a finite number from its nominal cost (${card.nominalCostUsd}) to ${LIMITS.usd}`,
      );
    }
    const maxAttempts = card.activity.retry.maximumAttempts;
    if (maxAttempts !== undefined && maxAttempts < 1) {
      problems.push(`${at} allows ${maxAttempts} attempts; use 1 for no retries (0 means unlimited in Temporal)`);
    }

    for (const grant of card.tools) {
      const price = grant.usdPerCall;
      if (price !== undefined && !(Number.isFinite(price) && price >= 0))
        problems.push(`${at} prices tool ${grant.name} at ${price} per call; a price is a finite amount, 0 or more`);
      const approval: unknown = grant.approval;
      if (approval !== undefined && approval !== 'always' && approval !== 'never' && typeof approval !== 'function')
        problems.push(
          `${at} asks approval for tool ${grant.name} as ${JSON.stringify(approval)}; give 'always', 'never' or a predicate over the call's arguments`,
        );
    }
    const writeTools = card.tools.filter((t) => t.access === 'write');
    if (card.role === 'critic' && (writeTools.length > 0 || card.writes !== null)) {
      problems.push(`${at} is a critic and must hold no write tools (holds ${describeTools(writeTools, card.writes)})`);
    } else if (card.writes === null && writeTools.length > 0) {
      problems.push(`${at} holds write tools (${describeTools(writeTools, null)}) but declares no system it writes`);
    }
    if (card.writes !== null) {
      if (card.role !== 'writer')
        problems.push(`${at} writes "${card.writes}" but its role is "${card.role}", not "writer"`);
      const foreign = writeTools.filter((t) => t.system !== card.writes);
      if (foreign.length > 0) {
        problems.push(
          `${at} writes "${card.writes}" but holds write tools for other systems (${describeTools(foreign, null)})`,
        );
      }
      if (writeTools.length === 0) problems.push(`${at} writes "${card.writes}" but holds no write tool for it`);
      writersBySystem.set(card.writes, [...(writersBySystem.get(card.writes) ?? []), card.name]);
      if (card.reconcile === undefined || !Object.hasOwn(RECONCILE_MODES, card.reconcile))
        problems.push(`${at} writes "${card.writes}" but ${reconcileChoices(card.reconcile)}`);
    } else if (card.role === 'writer') {
      problems.push(`${at} has role "writer" but names no system it writes`);
    }
    if (card.writes === null && card.reconcile !== undefined)
      problems.push(`${at} declares reconcile "${card.reconcile}" but writes no system`);

    const back = card.onTargetUnavailable;
    if (back !== undefined && back !== 'escalate') {
      const to = typeof back === 'object' && back !== null ? byName.get(back.to) : undefined;
      if (typeof back !== 'object' || back === null || (back.action !== 'reroute' && back.action !== 'degrade')) {
        problems.push(`${at} onTargetUnavailable must be 'escalate' or { action: 'reroute' | 'degrade', to: stage }`);
      } else if (!to) problems.push(`${at} sends returned packages to "${back.to}", which is not registered`);
      else if (to.name === card.name) problems.push(`${at} sends returned packages to itself`);
      else if (!card.outputs.some((t) => to.accepts.includes(t))) {
        problems.push(
          `${at} sends returned packages to "${to.name}", which takes none of its outputs (${card.outputs.join(', ')})`,
        );
      }
    }
    if (card.fallback !== undefined) {
      const fallback = byName.get(card.fallback);
      if (card.fallback === card.name) problems.push(`${at} names itself as its fallback`);
      else if (!fallback) problems.push(`${at} falls back to "${card.fallback}", which is not registered`);
      else {
        const missing = card.accepts.filter((t) => !fallback.accepts.includes(t));
        if (missing.length > 0)
          problems.push(`${at} falls back to "${fallback.name}", which does not accept ${missing.join(', ')}`);
        if (fallback.writes !== null || card.writes !== null) {
          problems.push(
            `${at} and its fallback "${fallback.name}" must not write: a write system has exactly one writer`,
          );
        }
      }
    }
  }

  for (const [system, writers] of writersBySystem) {
    if (writers.length > 1)
      problems.push(
        `system "${system}" has ${writers.length} writers (${writers.join(', ')}); exactly one stage may write it`,
      );
  }
  return problems;
}

export interface StageRegistry {
  readonly cards: readonly StageCard[];
  get(name: string): StageCard | undefined;
}

/** The writers' queue next to a job's task queue (`handrail` → `handrail-writer`): derived, not
 * fixed, so every worker deployment (and every test's own queue) gets writers of its own. */
export const writerTaskQueue = (jobTaskQueue: string): string => `${jobTaskQueue}-writer`;

/**
 * Where a stage's activity runs for a job on `jobTaskQueue`: its card's own queue when it names
 * one; else, for a stage that writes an external system, the writers' queue, which only a worker
 * holding that system's credentials polls (the general worker never registers a writer);
 * else the job's own queue.
 */
export function stageTaskQueue(card: Pick<StageCard, 'taskQueue' | 'writes'>, jobTaskQueue: string): string {
  return card.taskQueue ?? (card.writes !== null ? writerTaskQueue(jobTaskQueue) : jobTaskQueue);
}

/** What the rail reserves for a hop to this stage: its worst case, or its nominal cost. */
export const reservationUsd = (card: Pick<StageCard, 'nominalCostUsd' | 'worstCaseCostUsd'>): number =>
  card.worstCaseCostUsd ?? card.nominalCostUsd;

/** The newest artifact is what the next stage works on (older ones stay for reference). */
export function newestArtifact(pkg: Pick<HandoffV1, 'artifacts'>): Artifact | undefined {
  return pkg.artifacts[pkg.artifacts.length - 1];
}

/** Why this stage may not take this package, or null (the rail's ack and the stage's own
 * delivery check both ask this). */
export function roleMismatch(
  card: Pick<StageCard, 'name' | 'accepts' | 'packageVersions'>,
  pkg: Pick<HandoffV1, 'schema' | 'artifacts'>,
): string | null {
  if (!card.packageVersions.includes(pkg.schema))
    return `"${card.name}" reads ${card.packageVersions.join(', ')}, not ${pkg.schema}`;
  const input = newestArtifact(pkg);
  if (!input || !card.accepts.includes(input.type)) {
    return `"${card.name}" takes ${card.accepts.join(' | ')}, the package's newest artifact is ${input ? input.type : 'missing'}`;
  }
  return null;
}

/** The idempotency key of a stage's external write: `job_id:stage:artifact_type`, no attempt. */
export function writeKey(jobId: string, card: Pick<StageCard, 'name' | 'outputs'>): string {
  const [output] = card.outputs;
  if (output === undefined) throw new Error(`stage "${card.name}" names no output type`);
  return `${jobId}:${card.name}:${output}`;
}

/** The refusal of a writer card without a (known) reconcile mode: the three choices, each said. */
function reconcileChoices(given: string | undefined): string {
  const choices = Object.entries(RECONCILE_MODES)
    .map(([mode, meaning]) => `'${mode}' (${meaning})`)
    .join(', ');
  const what = given === undefined ? 'declares no reconcile mode' : `declares reconcile ${JSON.stringify(given)}`;
  return `${what} for a write in doubt; choose reconcile: ${choices}`;
}

function describeTools(tools: readonly ToolGrant[], writes: string | null): string {
  const names = tools.map((t) => `${t.name} on ${t.system}`);
  if (writes !== null) names.push(`writes ${writes}`);
  return names.join(', ');
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object') {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}
