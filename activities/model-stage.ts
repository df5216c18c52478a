/**
 * A model stage: one model turn or a tool loop whose answer is the artifact the stage emits,
 * valid by construction (the artifact type's zod schema is the model's output format) or the
 * stage fails `ModelOutputInvalid`. The prompt is exactly what the edge's handover produced;
 * every step is checkpointed under the delivery key, so a retried attempt resumes after the last
 * completed step; every tool call and result is recorded in the stage's turn of the conversation.
 */
import type { Tool, ToolSet } from 'ai';
import type { z } from 'zod';
import {
  assistantMessage,
  canonicalJson,
  toolCall,
  toolResult,
  reservationUsd,
  approvalWords,
  toolCallDigest,
  writeKey,
  type HandoffV1,
  type ToolCallAwaiting,
  type Message,
  type StageCard,
} from '../contracts';
import {
  attemptSteps,
  ModelOutputError,
  ReservationExhausted,
  runAgent,
  storedSteps,
  ToolApprovalPending,
  approvalGate,
  type AgentStep,
} from '../src/agents';
import { connectMcp, type McpConnection, type McpServerSpec } from '../src/agents/mcp';
import { inGenAiSpan } from '../src/agents/telemetry';
import { ModelError, type ChatModel } from '../src/worker/model';
import type { Store } from '../src/worker/store';
import { writeArtifact } from './artifacts';
import { stageFailure } from './failures';
import { abandonedSignal } from './model-call';
import type { StageOutput } from './stage';
import type { StageTurn } from './turn';

/** What a tool is made with: a write tool gets the stage's write-once key, to pass to the system
 * it writes (an `Idempotency-Key`), so a retried call does not write twice. */
export interface ToolContext {
  jobId: string;
  /** The writer's `job_id:stage:artifact_type` key for a write grant; null for a read grant. */
  writeKey: string | null;
}
/** A tool as the AI SDK takes it, or made per delivery from its context. */
export type StageTool = Tool | ((context: ToolContext) => Tool);

export interface ModelStageSpec<S extends z.ZodType> {
  /** The stage's card: the tools it grants (read or write, per-call price) and the system it writes. */
  card: Pick<StageCard, 'name' | 'tools' | 'writes' | 'outputs' | 'nominalCostUsd' | 'worstCaseCostUsd'>;
  system?: string;
  question: string;
  /** The artifact the stage emits: its type and the schema of its body. */
  output: { type: string; schema: S };
  /** Each named as the card's grant it uses; a tool the card does not grant is refused. */
  tools?: Record<string, StageTool>;
  /** MCP servers whose tools the card grants (by tool name); the others are not offered. */
  mcp?: readonly McpServerSpec[];
  /** 1 (the default): one model turn; more: a tool loop of at most this many steps. */
  maxSteps?: number;
  maxOutputTokens?: number;
  /** The most one step may send (a longer prompt is not sent: ReservationExhausted). With
   * `maxSteps` and `maxOutputTokens` it bounds the loop's worst case, `loopWorstCaseUsd`, which is
   * what the card should reserve (`worstCaseCostUsd`) unless it caps the stage lower. */
  maxPromptTokens?: number;
  /** The stage's summary segment, from what the model answered. */
  summary?: (body: z.infer<S>) => string;
}

export async function runModelStage<S extends z.ZodType>(
  store: Store,
  model: ChatModel,
  pkg: HandoffV1,
  turn: StageTurn,
  spec: ModelStageSpec<S>,
): Promise<StageOutput> {
  const local = spec.tools ? grantedTools(spec.card, pkg, spec.tools) : {};
  const { messages } = await turn.prompt({ ...(spec.system ? { system: spec.system } : {}), question: spec.question });
  const attributes = {
    'gen_ai.operation.name': 'invoke_agent',
    'gen_ai.agent.name': spec.card.name,
    'gen_ai.conversation.id': pkg.job_id,
    'gen_ai.request.model': model.model,
    'handrail.stage': spec.card.name,
    'handrail.hop': pkg.hop?.count ?? 0,
    // The hop as the rail acked and paid it: its ack, the wallet left and what the hop reserved.
    ...(pkg.ack ? { 'handrail.ack': pkg.ack.ack, 'handrail.delivery_key': pkg.ack.delivery_key } : {}),
    ...(pkg.budget ? { 'handrail.wallet.usd_remaining': pkg.budget.usd_remaining } : {}),
    'handrail.wallet.reserved_usd': pkg.ack?.reserved_usd ?? reservationUsd(spec.card),
  };
  return inGenAiSpan(`invoke_agent ${spec.card.name}`, attributes, async (span) => {
    const servers: McpConnection[] = [];
    try {
      const remote = await mcpTools(spec.card, pkg, spec.mcp ?? [], servers);
      const output = await runLoop(store, model, turn, spec, messages, { ...remote, ...local }, pkg);
      span.setAttributes({
        'handrail.cost_usd': output.cost_usd,
        'handrail.artifact_type': output.artifact.type,
        'handrail.tool_calls': output.tools_tried?.length ?? 0,
      });
      return output;
    } finally {
      await Promise.allSettled(servers.map((s) => s.close()));
    }
  });
}

/** The journal step that keeps the prompt a loop that may stop at a call began with. */
const RESUMED_PROMPT = 'prompt';

async function runLoop<S extends z.ZodType>(
  store: Store,
  model: ChatModel,
  turn: StageTurn,
  spec: ModelStageSpec<S>,
  messages: Awaited<ReturnType<StageTurn['prompt']>>['messages'],
  offered: ToolSet,
  pkg: Pick<HandoffV1, 'job_id'>,
): Promise<StageOutput> {
  const tools = Object.keys(offered).length > 0 ? offered : undefined;
  // A hop resumed after a human's word on a tool call goes on from the steps of the hop that
  // stopped at it (the rail names that hop's delivery key: this job's, this stage's).
  const words = approvalWords(turn.hooks, pkg.job_id, spec.card.name);
  const journalKey = turn.deliveryKey === undefined ? undefined : (words[0]?.resume_key ?? turn.deliveryKey);
  const journal = journalKey === undefined ? attemptSteps() : await storedSteps(store, journalKey);
  const approvals = journalKey === undefined ? undefined : approvalGate(spec.card.tools, words, journalKey);
  // A loop that may stop at a call keeps the prompt it began with: resumed, it goes on from that
  // prompt (the resumed hop's own prompt differs: its hop, the human's word in its history), so
  // every step it already took replays from the journal and no model call is repeated.
  const asked = approvals
    ? (JSON.parse(await journal.record(RESUMED_PROMPT, JSON.stringify(messages))) as typeof messages)
    : messages;
  const signal = abandonedSignal();
  const answer = await runAgent({
    model,
    messages: asked,
    schema: spec.output.schema,
    journal,
    ...(tools ? { tools } : {}),
    ...(spec.maxSteps ? { maxSteps: spec.maxSteps } : {}),
    ...(spec.maxOutputTokens ? { maxOutputTokens: spec.maxOutputTokens } : {}),
    ...(spec.maxPromptTokens ? { maxPromptTokens: spec.maxPromptTokens } : {}),
    ...(signal ? { signal } : {}),
    ...(approvals ? { approvals } : {}),
    toolUsd: (name) => spec.card.tools.find((t) => t.name === name)?.usdPerCall ?? 0,
    reservationUsd: reservationUsd(spec.card),
  }).catch((error: unknown) => {
    if (error instanceof ToolApprovalPending && journalKey !== undefined) {
      const { name, callId, input } = error.call;
      const call = { name, call_id: callId, args: input ?? null, resume_key: journalKey };
      const tool_call: ToolCallAwaiting = { ...call, digest: toolCallDigest(call) };
      throw stageFailure('ToolApprovalRequired', `${spec.card.name}: ${error.message}`, { tool_call });
    }
    if (error instanceof ReservationExhausted)
      throw stageFailure('ReservationExhausted', `${spec.card.name}: ${error.message}`, {
        spent_usd: error.spentUsd,
        next_step_usd: error.nextStepUsd,
      });
    if (error instanceof ModelOutputError)
      throw stageFailure('ModelOutputInvalid', `${spec.output.type}: ${error.message}`.slice(0, 2_000), {
        text: error.text?.slice(0, 2_000),
      });
    // Retryable model errors stay plain errors so Temporal's retry policy handles them.
    if (error instanceof ModelError && !error.retryable)
      throw stageFailure('ModelRejected', error.message, { status: error.status });
    throw error;
  });
  const body: unknown = answer.object;
  turn.reply(...stepMessages(answer.steps), assistantMessage(canonicalJson(body)));
  const called = answer.steps.flatMap((s) => s.toolCalls.map((c) => c.name));
  return {
    artifact: await writeArtifact(store, spec.output.type, spec.output.schema, answer.object as z.input<S>),
    body,
    cost_usd: answer.cost_usd,
    ...(called.length > 0 ? { tools_tried: called.map((name) => ({ name, ok: true })) } : {}),
    summary:
      spec.summary?.(answer.object) ??
      `${spec.output.type} from ${model.model} in ${answer.steps.length} step(s), ${called.length} tool call(s)`,
  };
}

/**
 * The tools as the card grants them: a tool with no grant is a stage offering the model what its
 * card (and so the pipeline's checks: write tools for the writer only) never allowed, refused
 * before anything runs. A write tool is made with the stage's write-once key.
 */
export function grantedTools(
  card: ModelStageSpec<z.ZodType>['card'],
  pkg: Pick<HandoffV1, 'job_id'>,
  tools: Record<string, StageTool>,
): ToolSet {
  const granted: ToolSet = {};
  for (const [name, made] of Object.entries(tools)) {
    const grant = card.tools.find((t) => t.name === name);
    if (!grant)
      throw new Error(
        `${card.name} offers its model tool "${name}", which its card does not grant (grants: ${card.tools.map((t) => t.name).join(', ') || 'none'})`,
      );
    const context: ToolContext = {
      jobId: pkg.job_id,
      writeKey: grant.access === 'write' ? writeKey(pkg.job_id, card) : null,
    };
    granted[name] = typeof made === 'function' ? made(context) : made;
  }
  return granted;
}

/** The granted tools of each MCP server (connected into `servers`, which the caller closes). */
async function mcpTools(
  card: ModelStageSpec<z.ZodType>['card'],
  pkg: Pick<HandoffV1, 'job_id'>,
  specs: readonly McpServerSpec[],
  servers: McpConnection[],
): Promise<ToolSet> {
  const offered: ToolSet = {};
  for (const spec of specs) {
    const server = await connectMcp(spec);
    servers.push(server);
    const keyOf = (name: string) =>
      card.tools.find((t) => t.name === name)?.access === 'write' ? writeKey(pkg.job_id, card) : null;
    for (const [name, made] of Object.entries(await server.tools(keyOf)))
      if (card.tools.some((t) => t.name === name)) offered[name] = made;
  }
  return offered;
}
/** A step's tool calls and results as the job's conversation records them (its text goes with the answer). */
function stepMessages(steps: readonly AgentStep[]): Message[] {
  return steps.flatMap((step) => [
    ...step.toolCalls.map((c) => toolCall(c.name, inputRecord(c.input), c.id)),
    ...step.toolResults.map((r) => toolResult(typeof r.output === 'string' ? r.output : canonicalJson(r.output), r.id)),
  ]);
}

const inputRecord = (input: unknown): Record<string, unknown> =>
  input !== null && typeof input === 'object' && !Array.isArray(input) ? (input as Record<string, unknown>) : { input };
