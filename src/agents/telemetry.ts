/**
 * OpenTelemetry spans of a model stage under the GenAI semantic conventions: `invoke_agent
 * <stage>` per hop, `chat <model>` per model call and `execute_tool <tool>` per tool call,
 * with `gen_ai.*` attributes and handrail's own (`handrail.*`: stage, cost, whether a step was
 * replayed from its checkpoint). They are made on the global tracer provider in the active
 * context, so they nest under whatever span the activity runs in (Temporal's OpenTelemetry
 * interceptors' `RunActivity`, when installed) and go wherever the process sends its spans.
 */
import { SpanKind, SpanStatusCode, trace, type Attributes, type Span } from '@opentelemetry/api';

const TRACER = 'handrail';

export async function inGenAiSpan<T>(
  name: string,
  attributes: Attributes,
  work: (span: Span) => Promise<T>,
  kind: SpanKind = SpanKind.INTERNAL,
): Promise<T> {
  return trace.getTracer(TRACER).startActiveSpan(name, { kind, attributes }, async (span) => {
    try {
      return await work(span);
    } catch (error) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
      span.setAttribute('error.type', error instanceof Error ? error.name : 'Error');
      throw error;
    } finally {
      span.end();
    }
  });
}

/** Token counts as the conventions name them; a missing count is left out, not zero. */
export function usageAttributes(usage: { input?: number | undefined; output?: number | undefined }): Attributes {
  return {
    ...(usage.input === undefined ? {} : { 'gen_ai.usage.input_tokens': usage.input }),
    ...(usage.output === undefined ? {} : { 'gen_ai.usage.output_tokens': usage.output }),
  };
}
