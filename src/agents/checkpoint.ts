/**
 * Checkpointed steps of an AI SDK tool loop: the model is wrapped so that a call whose prompt
 * was already answered under this delivery returns the recorded answer (the endpoint is not
 * asked, the provider does not bill it again), and each tool so that a call id already run
 * returns its recorded result (the tool does not run again). The loop itself is the AI SDK's,
 * untouched: replayed steps give it the same replies, so it takes the same path to where the
 * earlier attempt stopped, then goes on live.
 */
import { hopText } from '../stream/hop-text';
import { createHash } from 'node:crypto';
import { asSchema, wrapLanguageModel, type LanguageModel, type ToolSet } from 'ai';
import { SpanKind } from '@opentelemetry/api';
import type { StepJournal } from './step-journal';
import { inGenAiSpan, usageAttributes } from './telemetry';

/** A model object (not a gateway id string): what a stage's loop calls. */
export type StageLanguageModel = Exclude<LanguageModel, string>;
type WrappedModel = ReturnType<typeof wrapLanguageModel>;
type GenerateResult = Awaited<ReturnType<WrappedModel['doGenerate']>>;
type CallOptions = Parameters<WrappedModel['doGenerate']>[0];

/** The part of a reply the loop reads; request and response bodies and headers stay out. */
interface RecordedReply {
  content: GenerateResult['content'];
  finishReason: GenerateResult['finishReason'];
  usage: GenerateResult['usage'];
  warnings: GenerateResult['warnings'];
  providerMetadata?: GenerateResult['providerMetadata'];
  response?: { id?: string; modelId?: string; timestamp?: string };
}

/**
 * The model, answering from `journal` where it can. A step is named by its position in the loop
 * and the hash of its prompt: a loop that diverges (other code, another prompt) misses and asks
 * the model, rather than being handed an answer to a question it did not ask.
 */
export function checkpointedModel(model: StageLanguageModel, journal: StepJournal): WrappedModel {
  let position = 0;
  return wrapLanguageModel({
    model,
    middleware: {
      specificationVersion: 'v4',
      async wrapGenerate({ doGenerate, params, model: called }) {
        position += 1;
        const step = `model:${position}:${promptHash(params)}`;
        const recorded = journal.find(step);
        const attributes = {
          'gen_ai.operation.name': 'chat',
          'gen_ai.provider.name': called.provider,
          'gen_ai.request.model': called.modelId,
          ...(params.maxOutputTokens === undefined ? {} : { 'gen_ai.request.max_tokens': params.maxOutputTokens }),
          'handrail.step': position,
          'handrail.step_replayed': recorded !== undefined,
        };
        return inGenAiSpan(
          `chat ${called.modelId}`,
          attributes,
          async (span) => {
            const reply =
              recorded !== undefined
                ? revive(JSON.parse(recorded) as RecordedReply)
                : revive(
                    JSON.parse(
                      await journal.record(step, JSON.stringify(recordable(await doGenerate()))),
                    ) as RecordedReply,
                  );
            span.setAttributes({
              ...usageAttributes({ input: reply.usage.inputTokens.total, output: reply.usage.outputTokens.total }),
              'gen_ai.response.finish_reasons': [reply.finishReason.unified],
              ...(reply.response?.id ? { 'gen_ai.response.id': reply.response.id } : {}),
            });
            return reply;
          },
          SpanKind.CLIENT,
        );
      },
    },
  });
}

/** What a loop does with a tool call that has not run yet: run it, hand the model a refusal in its
 * place (a tool error), or stop the loop at it for a human (the call does not run). */
export type CallGate = (call: {
  name: string;
  callId: string;
  input: unknown;
}) => 'run' | 'stop' | { refused: string } | { args: unknown };

/** The tools, each call id run at most once under `journal` (its result recorded as it returns);
 * a call that has not run passes `gate` first. */
export function checkpointedTools<T extends ToolSet>(tools: T, journal: StepJournal, gate?: CallGate): T {
  const wrapped: ToolSet = {};
  for (const [name, tool] of Object.entries(tools)) {
    const execute = tool.execute;
    if (!execute) {
      wrapped[name] = tool;
      continue;
    }
    wrapped[name] = {
      ...tool,
      execute: async (input: unknown, options: Parameters<typeof execute>[1]) => {
        const step = `tool:${name}:${options.toolCallId}`;
        const recorded = journal.find(step);
        const attributes = {
          'gen_ai.operation.name': 'execute_tool',
          'gen_ai.tool.name': name,
          'gen_ai.tool.call.id': options.toolCallId,
          'handrail.step_replayed': recorded !== undefined,
        };
        return inGenAiSpan(`execute_tool ${name}`, attributes, async () => {
          if (recorded !== undefined) return JSON.parse(recorded) as unknown;
          // A refusal is recorded like a result: the call is decided once, whenever the loop resumes.
          const refusal = `refused:${name}:${options.toolCallId}`;
          const refused = journal.find(refusal);
          if (refused !== undefined) throw new Error(refused);
          const passed = gate?.({ name, callId: options.toolCallId, input }) ?? 'run';
          // Stopped: the loop ends before its next step (runAgent); refused: the model reads why.
          if (passed === 'stop') throw new Error(`${name} waits for a human's approval`);
          if (typeof passed === 'object' && 'refused' in passed)
            throw new Error(await journal.record(refusal, passed.refused));
          // A human's arguments, where the grant allows edits: held to the tool's own schema.
          if (typeof passed === 'object') input = await editedInput(tool, name, passed.args, journal, refusal);
          // A follower sees the call start and end (src/stream/hop-text.ts); a replayed one ran before.
          const followed = hopText();
          const call = { call_id: options.toolCallId, name };
          followed?.toolCall({ ...call, phase: 'start', args: input });
          try {
            const result: unknown = await (execute as (i: unknown, o: typeof options) => unknown)(input, options);
            const kept = JSON.parse(await journal.record(step, JSON.stringify(result ?? null))) as unknown;
            followed?.toolCall({ ...call, phase: 'end', ok: true });
            return kept;
          } catch (err) {
            followed?.toolCall({ ...call, phase: 'end', ok: false });
            throw err;
          }
        });
      },
    } as ToolSet[string];
  }
  return wrapped as T;
}

/** The arguments a human gave a call instead of the model's, if they fit the tool's input schema;
 * else the call is refused (recorded, so it is decided once) and the model reads why. */
async function editedInput(
  tool: ToolSet[string],
  name: string,
  args: unknown,
  journal: StepJournal,
  refusal: string,
): Promise<unknown> {
  const checked = await asSchema(tool.inputSchema).validate?.(args);
  if (!checked || checked.success) return checked ? checked.value : args;
  throw new Error(
    await journal.record(refusal, `the arguments a human gave ${name} do not fit it: ${checked.error.message}`),
  );
}

/** What the model is asked: the prompt and the tools and format it may answer with. */
function promptHash(params: CallOptions): string {
  const asked = { prompt: params.prompt, tools: params.tools ?? null, responseFormat: params.responseFormat ?? null };
  return createHash('sha256').update(JSON.stringify(asked)).digest('hex').slice(0, 32);
}

function recordable(reply: GenerateResult): RecordedReply {
  const response = reply.response;
  return {
    content: reply.content,
    finishReason: reply.finishReason,
    usage: reply.usage,
    warnings: reply.warnings,
    ...(reply.providerMetadata ? { providerMetadata: reply.providerMetadata } : {}),
    ...(response
      ? {
          response: {
            ...(response.id === undefined ? {} : { id: response.id }),
            ...(response.modelId === undefined ? {} : { modelId: response.modelId }),
            ...(response.timestamp === undefined ? {} : { timestamp: response.timestamp.toISOString() }),
          },
        }
      : {}),
  };
}

function revive(recorded: RecordedReply): GenerateResult {
  const { response, ...rest } = recorded;
  return {
    ...rest,
    ...(response
      ? {
          response: {
            ...(response.id === undefined ? {} : { id: response.id }),
            ...(response.modelId === undefined ? {} : { modelId: response.modelId }),
            ...(response.timestamp === undefined ? {} : { timestamp: new Date(response.timestamp) }),
          },
        }
      : {}),
  };
}
