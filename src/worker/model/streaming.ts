/**
 * A model that streams inside a rail's hop (where the stage's worker opened the hop's stream,
 * whether or not anyone follows it now: a follower may resume within the retention): `doGenerate`
 * asks the provider for a stream, hands each text delta to the hop's sink (src/stream/hop-text.ts) and returns the same
 * result a generate call would, so every caller (the model turn, the agent loop, its checkpoint
 * journal) is unchanged. Outside a hop it generates as before.
 */
import type {
  LanguageModelV4Content,
  LanguageModelV4GenerateResult,
  LanguageModelV4StreamPart,
} from '@ai-sdk/provider';
import { APICallError, wrapLanguageModel, type LanguageModel } from 'ai';
import { ModelError } from './errors';
import { hopText, type HopText } from '../../stream/hop-text';

type Model = Exclude<LanguageModel, string>;
type ResponseMeta = Omit<Extract<LanguageModelV4StreamPart, { type: 'response-metadata' }>, 'type'>;

export function streamingWhenFollowed(model: Model): Model {
  return wrapLanguageModel({
    model: model as Parameters<typeof wrapLanguageModel>[0]['model'],
    middleware: {
      specificationVersion: 'v4',
      async wrapGenerate({ doGenerate, doStream }) {
        const sink = hopText();
        if (!sink) return doGenerate();
        let started: Awaited<ReturnType<typeof doStream>>;
        try {
          started = await doStream();
        } catch (error) {
          // An endpoint that refuses to stream (400 for `stream` or `stream_options`) generated
          // nothing and charged nothing: the call is made again as a plain generate.
          if (APICallError.isInstance(error) && error.statusCode === 400) return doGenerate();
          throw error;
        }
        const { stream, request, response } = started;
        const { meta, ...result } = await collect(stream, sink);
        return { ...result, ...(request ? { request } : {}), response: { ...response, ...meta } };
      },
    },
  });
}

/** A generate result from a stream's parts, the text deltas told to `sink` as they come. */
async function collect(
  stream: ReadableStream<LanguageModelV4StreamPart>,
  sink: HopText,
): Promise<Omit<LanguageModelV4GenerateResult, 'request' | 'response'> & { meta: ResponseMeta }> {
  const reader = stream.getReader();
  try {
    return await read(reader, sink);
  } finally {
    // A failed read leaves the response open: let it go.
    await reader.cancel().catch(() => undefined);
  }
}

async function read(
  reader: ReadableStreamDefaultReader<LanguageModelV4StreamPart>,
  sink: HopText,
): Promise<Omit<LanguageModelV4GenerateResult, 'request' | 'response'> & { meta: ResponseMeta }> {
  const content: LanguageModelV4Content[] = [];
  const texts = new Map<string, { type: 'text' | 'reasoning'; text: string }>();
  let finish: Extract<LanguageModelV4StreamPart, { type: 'finish' }> | undefined;
  let meta: ResponseMeta = {};
  let warnings: Extract<LanguageModelV4StreamPart, { type: 'stream-start' }>['warnings'] = [];
  for (;;) {
    let next: Awaited<ReturnType<typeof reader.read>>;
    try {
      next = await reader.read();
    } catch (error) {
      // The connection dropped mid-answer: the endpoint's weather, as a failed request is.
      throw new ModelError(`the model's stream broke off: ${(error as Error).message}`, true);
    }
    const { done, value: part } = next;
    if (done) break;
    switch (part.type) {
      case 'stream-start':
        warnings = part.warnings;
        break;
      case 'response-metadata': {
        const { type: _type, ...rest } = part;
        meta = rest;
        break;
      }
      case 'text-start':
      case 'reasoning-start': {
        const block = { type: part.type === 'text-start' ? ('text' as const) : ('reasoning' as const), text: '' };
        texts.set(part.id, block);
        content.push(block as LanguageModelV4Content);
        break;
      }
      case 'text-delta':
      case 'reasoning-delta': {
        const block = texts.get(part.id);
        if (block) block.text += part.delta;
        // Reasoning stays with the model: only the answer's text is followed.
        if (part.type === 'text-delta') sink.write(part.delta);
        break;
      }
      case 'tool-call':
      case 'tool-result':
      case 'file':
      case 'source':
        content.push(part as LanguageModelV4Content);
        break;
      case 'finish':
        finish = part;
        break;
      case 'error':
        throw part.error instanceof Error
          ? part.error
          : new ModelError(`the model's stream reported an error: ${JSON.stringify(part.error).slice(0, 300)}`, true);
      default:
        break;
    }
  }
  if (!finish) throw new Error('the model stream ended without finishing');
  return {
    content,
    finishReason: finish.finishReason,
    usage: finish.usage,
    warnings,
    meta,
    ...(finish.providerMetadata ? { providerMetadata: finish.providerMetadata } : {}),
  };
}
