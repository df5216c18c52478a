/**
 * One model stage's work on the AI SDK: a single turn, or a tool loop of at most `maxSteps`
 * steps, whose final answer is an object of the emitted artifact's schema (`Output.object`).
 * Every step is checkpointed under the stage's journal (src/agents/checkpoint.ts), so the cost
 * is counted from the steps' recorded usage: a replayed step is paid once, when it ran.
 */
import { generateText, isStepCount, NoObjectGeneratedError, NoOutputGeneratedError, Output, type ToolSet } from 'ai';
import type { z } from 'zod';
import { type ChatMessage, type ChatModel, type TokenUsage, tokenUsage } from '../worker/model';
import { asModelError } from '../worker/model/errors';
import { checkpointedModel, checkpointedTools, type CallGate } from './checkpoint';
import type { StepJournal } from './step-journal';

export interface AgentRun<S extends z.ZodType> {
  model: ChatModel;
  /** Exactly what the edge's handover produced for this turn (`turn.prompt()`'s messages). */
  messages: readonly ChatMessage[];
  /** The schema of the artifact the stage emits: the loop's answer must parse as one. */
  schema: S;
  tools?: ToolSet;
  /** 1: one model turn, no tool loop. */
  maxSteps?: number;
  maxOutputTokens?: number;
  journal: StepJournal;
  signal?: AbortSignal;
  /** What one call of a tool costs (USD); unset, nothing. */
  toolUsd?: (name: string) => number;
  /** The hop's reservation (USD): the loop stops before a step whose worst case would break it. */
  reservationUsd?: number;
  /** The most one step may send: with `maxSteps` and `maxOutputTokens`, what bounds the loop's
   * worst case (loopWorstCaseUsd); a step whose prompt could be longer is not taken. */
  maxPromptTokens?: number;
  /** Whether a call must wait for a human first, and the human's word where one was given
   * (src/agents/approval.ts): unset, every call runs. */
  approvals?: ApprovalGate;
}

/** What the loop asks before a tool call runs (a call that ran before is not asked again). */
export interface ApprovalGate {
  /** Whether this call needs a human's approval (the grant's `approval`). */
  needed(name: string, input: unknown): boolean;
  /** The human's word on this call, if one was given for it. */
  decided(call: {
    name: string;
    callId: string;
    input: unknown;
  }): { approved: true; args?: unknown } | { refused: string } | undefined;
}

/** The loop stopped at a call that waits for a human: nothing of it ran, the steps before it are
 * in the journal, so the loop resumes at this call once it is decided. */
export class ToolApprovalPending extends Error {
  override readonly name = 'ToolApprovalPending';
  constructor(readonly call: { name: string; callId: string; input: unknown }) {
    super(`the model called ${call.name}, which waits for a human's approval`);
  }
}

/** What happened at one step, as the job's conversation records it. */
export interface AgentStep {
  text: string;
  toolCalls: { id: string; name: string; input: unknown }[];
  toolResults: { id: string; name: string; output: unknown }[];
  usage: TokenUsage;
  /** The model id the reply named (a router's pick, a dated snapshot): what its tokens are priced as. */
  modelId?: string;
}

export interface AgentAnswer<T> {
  object: T;
  steps: AgentStep[];
  usage: TokenUsage;
  cost_usd: number;
}

/** The loop's next step could cost more than what is left of its reservation: it was not taken. */
export class ReservationExhausted extends Error {
  override readonly name = 'ReservationExhausted';
  constructor(
    message: string,
    readonly spentUsd: number,
    readonly nextStepUsd: number,
  ) {
    super(message);
  }
}

/** The model answered, but not with an object of the schema (or with none within its steps). */
export class ModelOutputError extends Error {
  override readonly name = 'ModelOutputError';
  constructor(
    message: string,
    readonly text: string | undefined,
  ) {
    super(message);
  }
}

export async function runAgent<S extends z.ZodType>(run: AgentRun<S>): Promise<AgentAnswer<z.infer<S>>> {
  const { model } = run;
  if (!model.languageModel || !model.price)
    throw new Error(`model ${model.model} has no AI SDK model or price: a model stage needs both`);
  const price = model.price;
  const costOf = (step: AgentStep) =>
    price(step.usage, step.modelId) + step.toolCalls.reduce((sum, c) => sum + (run.toolUsd?.(c.name) ?? 0), 0);
  const stop = stopAtApproval(run.approvals);
  const generated = await generate(run, model.languageModel, price, costOf, stop).catch((error: unknown) => {
    if (run.signal?.aborted) throw run.signal.reason ?? error;
    if (error instanceof ReservationExhausted || error instanceof ToolApprovalPending) throw error;
    if (stop?.pending) throw new ToolApprovalPending(stop.pending);
    if (NoObjectGeneratedError.isInstance(error) || NoOutputGeneratedError.isInstance(error))
      throw new ModelOutputError(`the model's answer is not a valid artifact: ${error.message}`, textOf(error));
    throw asModelError(error);
  });
  // The call was the last step's: no step came after it to stop at.
  if (stop?.pending) throw new ToolApprovalPending(stop.pending);
  const steps = generated.steps.map(agentStep);
  const cached = sum(steps.map((s) => s.usage.cached_tokens ?? 0));
  const usage = {
    prompt_tokens: sum(steps.map((s) => s.usage.prompt_tokens)),
    completion_tokens: sum(steps.map((s) => s.usage.completion_tokens)),
    ...(cached > 0 ? { cached_tokens: cached } : {}),
  };
  return { object: generated.object, steps, usage, cost_usd: sum(steps.map(costOf)) };
}

type SdkStep = Awaited<ReturnType<typeof generateText>>['steps'][number];

function agentStep(step: SdkStep): AgentStep {
  return {
    text: step.text,
    toolCalls: step.toolCalls.map((c) => ({ id: c.toolCallId, name: c.toolName, input: c.input })),
    toolResults: step.toolResults.map((r) => ({ id: r.toolCallId, name: r.toolName, output: r.output })),
    usage: tokenUsage(step.usage),
    ...(step.response.modelId ? { modelId: step.response.modelId } : {}),
  };
}

/**
 * Before each step: what the steps so far cost (model tokens and tool calls), and the next
 * step's worst case: its prompt at one token per two characters, plus `maxOutputTokens`, at the
 * model's price. A step that could break the reservation is not taken, nor one whose prompt
 * could pass `maxPromptTokens` (the bound the stage's worst case was computed with). Without
 * `maxOutputTokens` a step's answer has no bound, and only its prompt is counted.
 */
function reservationGuard(
  run: AgentRun<z.ZodType>,
  price: (usage: TokenUsage, answeredBy?: string) => number,
  costOf: (step: AgentStep) => number,
) {
  const reservation = run.reservationUsd;
  if (reservation === undefined && run.maxPromptTokens === undefined) return undefined;
  return ({ steps, messages }: { steps: SdkStep[]; messages: unknown[] }) => {
    const spent = sum(steps.map((s) => costOf(agentStep(s))));
    const prompt = Math.ceil(JSON.stringify(messages).length / 2);
    const next = price({ prompt_tokens: prompt, completion_tokens: run.maxOutputTokens ?? 0 });
    if (run.maxPromptTokens !== undefined && prompt > run.maxPromptTokens)
      throw new ReservationExhausted(
        `step ${steps.length + 1}'s prompt could be ${prompt} tokens: over the stage's maxPromptTokens of ${run.maxPromptTokens}, which its worst case assumes`,
        spent,
        next,
      );
    if (reservation !== undefined && spent + next > reservation)
      throw new ReservationExhausted(
        `step ${steps.length + 1} could cost $${next.toFixed(6)} with $${spent.toFixed(6)} spent: over the hop's reservation of $${reservation.toFixed(6)}`,
        spent,
        next,
      );
    return undefined;
  };
}

/** The gate a loop's tools pass, and the call it stopped at: a call that needs a human and has
 * no word runs nothing, and the loop ends before its next step. */
function stopAtApproval(approvals: ApprovalGate | undefined) {
  if (!approvals) return undefined;
  const stop: { pending?: ToolApprovalPending['call']; gate: CallGate } = {
    gate: (call) => {
      if (stop.pending) return 'stop';
      const word = approvals.decided(call);
      if (word) return 'approved' in word ? (word.args !== undefined ? { args: word.args } : 'run') : word;
      if (!approvals.needed(call.name, call.input)) return 'run';
      stop.pending = call;
      return 'stop';
    },
  };
  return stop;
}

async function generate<S extends z.ZodType>(
  run: AgentRun<S>,
  languageModel: NonNullable<ChatModel['languageModel']>,
  price: (usage: TokenUsage, answeredBy?: string) => number,
  costOf: (step: AgentStep) => number,
  stop: ReturnType<typeof stopAtApproval>,
) {
  const budget = reservationGuard(run, price, costOf);
  // Before each step: a call that waits for a human ends the loop there (nothing more is asked).
  const guard =
    budget || stop
      ? (options: Parameters<NonNullable<typeof budget>>[0]) => {
          if (stop?.pending) throw new ToolApprovalPending(stop.pending);
          return budget?.(options);
        }
      : undefined;
  const result = await generateText({
    model: checkpointedModel(languageModel, run.journal),
    messages: [...run.messages],
    allowSystemInMessages: true,
    temperature: 0,
    // Temporal retries the activity, and the journal makes that retry cheap; the SDK's own
    // retries would pay for a step twice.
    maxRetries: 0,
    stopWhen: isStepCount(run.maxSteps ?? 1),
    output: Output.object({ schema: run.schema }),
    ...(run.tools ? { tools: checkpointedTools(run.tools, run.journal, stop?.gate) } : {}),
    ...(run.maxOutputTokens ? { maxOutputTokens: run.maxOutputTokens } : {}),
    ...(run.model.timeoutMs ? { timeout: { stepMs: run.model.timeoutMs } } : {}),
    ...(run.signal ? { abortSignal: run.signal } : {}),
    ...(guard ? { prepareStep: guard } : {}),
  });
  // Reading `output` parses and validates the last step's answer (it throws when it fails).
  return { steps: result.steps, object: result.output as z.infer<S> };
}

const textOf = (error: unknown) => (NoObjectGeneratedError.isInstance(error) ? error.text : undefined);
const sum = (values: readonly number[]) => values.reduce((a, b) => a + b, 0);
