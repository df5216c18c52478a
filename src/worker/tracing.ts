/**
 * The worker side of hop tracing (workflows/tracing.ts): each hop the rail reports becomes a
 * `hop <from> → <stage>` span whose parent is the package's traceparent, with one `ack <state>`
 * child span per ack. A refused hop is a span with an error status and no stage work under it.
 *
 * Where spans go: with OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) set,
 * to that OTLP/HTTP collector (Jaeger, Tempo, Honeycomb, ...), with Temporal's activity spans and
 * the model stages' GenAI spans under them (src/worker/otel.ts; HANDRAIL_TRACE_WORKFLOWS=1 adds
 * the workflow spans, see there first); otherwise to whatever tracer provider the process
 * registered globally, which is none (spans dropped) unless you set one up.
 */
import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  TraceFlags,
  trace,
  type Attributes,
  type Context,
  type Tracer,
} from '@opentelemetry/api';
import type { InjectedSinks, WorkerPlugin } from '@temporalio/worker';
import type { WorkflowInfo } from '@temporalio/workflow';
import { parseTraceparent } from '../../contracts';
import type { HopTrace, RailSinks } from '../../workflows/tracing';

const TRACER_NAME = 'handrail';

/** Acks that let the stage work (or answered it from the first delivery). */
const PROCEEDS = new Set(['accepted', 'duplicate']);

export interface Tracing {
  tracer: Tracer;
  /** For every worker of the process (`createHandrailWorkers({ temporalPlugins })`): Temporal's
   * OpenTelemetry interceptors when exporting, none otherwise. */
  temporalPlugins: WorkerPlugin[];
  /** Flushes spans still buffered; call once the workers stopped. */
  shutdown(): Promise<void>;
}

export async function tracingFromEnv(env: NodeJS.ProcessEnv = process.env): Promise<Tracing> {
  // The OTLP spec's rule: a signal-specific endpoint is used as is, the general one gets /v1/traces.
  const url =
    env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ||
    (env.OTEL_EXPORTER_OTLP_ENDPOINT && `${env.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/+$/, '')}/v1/traces`);
  if (!url) return { tracer: trace.getTracer(TRACER_NAME), temporalPlugins: [], shutdown: async () => undefined };
  // Loaded only when exporting: the SDK, the exporter and the interceptors add about 10 MiB to a worker.
  const [{ OTLPTraceExporter }, { BatchSpanProcessor }, { temporalTelemetry }] = await Promise.all([
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/sdk-trace-base'),
    import('./otel'),
  ]);
  const telemetry = temporalTelemetry({
    spanProcessor: new BatchSpanProcessor(new OTLPTraceExporter({ url })),
    serviceName: env.OTEL_SERVICE_NAME || 'handrail-worker',
    workflowSpans: env.HANDRAIL_TRACE_WORKFLOWS === '1',
  });
  // temporalTelemetry registered its provider globally: the hop spans share it with the rest.
  return { tracer: trace.getTracer(TRACER_NAME), temporalPlugins: [telemetry.plugin], shutdown: telemetry.shutdown };
}

/** The sinks the rail's workflows call; registered on every worker that runs them. */
export function railSinks(tracer: Tracer = trace.getTracer(TRACER_NAME)): InjectedSinks<RailSinks> {
  return {
    trace: {
      // Once per hop: a workflow replayed after a restart does not report its old hops again.
      hop: { fn: (info: WorkflowInfo, hop: HopTrace) => recordHop(tracer, hop, info), callDuringReplay: false },
    },
  };
}

/** `base` with the span a W3C traceparent names as its remote parent; undefined when `traceparent`
 * is not a valid one. */
export function inTraceparent(base: Context, traceparent: unknown): Context | undefined {
  const parent = typeof traceparent === 'string' ? parseTraceparent(traceparent) : null;
  if (!parent) return undefined;
  return trace.setSpanContext(base, {
    traceId: parent.traceId,
    spanId: parent.parentId,
    traceFlags: parent.sampled ? TraceFlags.SAMPLED : TraceFlags.NONE,
    isRemote: true,
  });
}

export function recordHop(
  tracer: Tracer,
  hop: HopTrace,
  info?: Pick<WorkflowInfo, 'workflowId' | 'runId' | 'workflowType'>,
): void {
  const parentContext = inTraceparent(ROOT_CONTEXT, hop.traceparent) ?? ROOT_CONTEXT;
  const attributes: Attributes = {
    'handrail.job_id': hop.job_id,
    'handrail.stage': hop.stage,
    'handrail.from': hop.from,
    'handrail.reason': hop.reason,
    'handrail.cost_usd': hop.cost_usd,
    ...(hop.ran ? { 'handrail.ran': hop.ran } : {}),
    ...(hop.acks[0] ? { 'handrail.hop': hop.acks[0].hop, 'handrail.delivery_key': hop.acks[0].delivery_key } : {}),
    ...(info
      ? {
          'temporal.workflow_id': info.workflowId,
          'temporal.run_id': info.runId,
          'temporal.workflow_type': info.workflowType,
        }
      : {}),
  };
  const span = tracer.startSpan(
    `hop ${hop.from} → ${hop.stage}`,
    { kind: SpanKind.INTERNAL, startTime: hop.started_at, attributes },
    parentContext,
  );
  const hopContext = trace.setSpan(parentContext, span);
  for (const ack of hop.acks) {
    const at = Date.parse(ack.at);
    const ackSpan = tracer.startSpan(
      `ack ${ack.ack}`,
      {
        startTime: at,
        attributes: {
          'handrail.ack': ack.ack,
          'handrail.stage': ack.stage,
          'handrail.reason': ack.reason,
          ...(ack.invariant ? { 'handrail.invariant': ack.invariant } : {}),
          ...(ack.actor ? { 'handrail.actor': ack.actor } : {}),
        },
      },
      hopContext,
    );
    if (!PROCEEDS.has(ack.ack)) ackSpan.setStatus({ code: SpanStatusCode.ERROR, message: ack.reason });
    ackSpan.end(at);
  }
  const refused = hop.acks.find((a) => !PROCEEDS.has(a.ack));
  if (hop.failure || refused)
    span.setStatus({ code: SpanStatusCode.ERROR, message: hop.failure ?? `${refused!.ack}: ${refused!.reason}` });
  span.end(hop.ended_at);
}
