/**
 * A model stage: one model turn or a tool loop whose answer is the artifact the stage emits,
 * valid by construction (the artifact type's zod schema is the model's output format) or the
 * stage fails `ModelOutputInvalid`. The prompt is exactly what the edge's handover produced;
 * every step is checkpointed under the delivery key, so a retried attempt resumes after the last
 * completed step; every tool call and result is recorded in the stage's turn of the conversation.
 */
import type { ToolSet } from 'ai';
import type { z } from 'zod';
import { assistantMessage, canonicalJson, toolCall, toolResult, type HandoffV1, type Message } from '../contracts';
import { attemptSteps, ModelOutputError, runAgent, storedSteps, type AgentStep } from '../src/agents';
import { ModelError, type ChatModel } from '../src/worker/model';
import type { Store } from '../src/worker/store';
import { writeArtifact } from './artifacts';
import { stageFailure } from './failures';
import { abandonedSignal } from './model-call';
import type { StageOutput } from './stage';
import type { StageTurn } from './turn';

export interface ModelStageSpec<S extends z.ZodType> {
  system?: string;
  question: string;
  /** The artifact the stage emits: its type and the schema of its body. */
  output: { type: string; schema: S };
  tools?: ToolSet;
  /** 1 (the default): one model turn; more: a tool loop of at most this many steps. */
  maxSteps?: number;
  maxOutputTokens?: number;
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
  const { messages } = await turn.prompt({ ...(spec.system ? { system: spec.system } : {}), question: spec.question });
  const journal = turn.deliveryKey === undefined ? attemptSteps() : await storedSteps(store, turn.deliveryKey);
  const signal = abandonedSignal();
  const answer = await runAgent({
    model,
    messages,
    schema: spec.output.schema,
    journal,
    ...(spec.tools ? { tools: spec.tools } : {}),
    ...(spec.maxSteps ? { maxSteps: spec.maxSteps } : {}),
    ...(spec.maxOutputTokens ? { maxOutputTokens: spec.maxOutputTokens } : {}),
    ...(signal ? { signal } : {}),
  }).catch((error: unknown) => {
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
  const tools = answer.steps.flatMap((s) => s.toolCalls.map((c) => c.name));
  return {
    artifact: await writeArtifact(store, spec.output.type, spec.output.schema, answer.object as z.input<S>),
    body,
    cost_usd: answer.cost_usd,
    ...(tools.length > 0 ? { tools_tried: tools.map((name) => ({ name, ok: true })) } : {}),
    summary:
      spec.summary?.(answer.object) ??
      `${spec.output.type} from ${model.model} in ${answer.steps.length} step(s), ${tools.length} tool call(s)`,
  };
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
