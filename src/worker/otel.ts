/**
 * handrail's spans inside Temporal's: the activity interceptors of Temporal's OpenTelemetry
 * package (`@temporalio/interceptors-opentelemetry`) wrap each activity in a `RunActivity:<type>`
 * span, and a model stage's GenAI spans (`invoke_agent`, `chat`, `execute_tool`:
 * src/agents/telemetry.ts) start in the active context, so they become its children: one trace
 * per stage activity, not two beside each other.
 *
 * That needs one tracer provider and a context manager that follows async calls: `temporalTelemetry`
 * registers both globally (the interceptors and handrail's spans use the global tracer) and gives
 * the plugin to pass to every worker of the process.
 *
 * A stage activity's `RunActivity` span starts under the traceparent its package carries (the
 * job's trace, where the rail's hop spans are too), unless the activity's headers carry one.
 *
 * `workflowSpans: true` is the package's whole OpenTelemetryPlugin: its workflow interceptors add
 * `RunWorkflow` and `StartActivity` spans and carry the trace to activities in their headers.
 * They change when a workflow's commands are issued (a span, and on histories recorded without
 * them an extra yield, around each activity scheduled), so a history recorded without them does
 * not replay with them (test/replay/otel-interceptors.test.ts): turn them on only for a new Worker
 * Deployment Version (jobs pinned to the old one finish there) or a deployment with no jobs running.
 */
import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import {
  OpenTelemetryActivityInboundInterceptor,
  OpenTelemetryActivityOutboundInterceptor,
  OpenTelemetryPlugin,
} from '@temporalio/interceptors-opentelemetry';
import { SimplePlugin } from '@temporalio/plugin';
import type { ActivityInboundCallsInterceptor } from '@temporalio/worker';
import { inTraceparent } from './tracing';

export interface TemporalTelemetryOptions {
  /** Where every span goes (a BatchSpanProcessor with an OTLP exporter, in production). */
  spanProcessor: SpanProcessor;
  serviceName?: string;
  /** Also the workflow interceptors (RunWorkflow / StartActivity spans): see above before turning on. */
  workflowSpans?: boolean;
}

export interface TemporalTelemetry {
  /** Pass to every worker of the process (`createHandrailWorkers({ temporalPlugins: [plugin] })`). */
  plugin: SimplePlugin;
  /** Flushes and stops the provider, and unregisters it; call once the workers stopped. */
  shutdown(): Promise<void>;
}

type OtelPluginOptions = ConstructorParameters<typeof OpenTelemetryPlugin>[0];

/** Runs a stage activity in the trace of the package it was handed (`StageWork.package.trace`);
 * any other activity, or a package without a valid traceparent, in the context it has. */
export const inPackageTrace: NonNullable<ActivityInboundCallsInterceptor['execute']> = (input, next) => {
  const work = input.args[0] as { package?: { trace?: { traceparent?: unknown } } } | undefined;
  const carried = inTraceparent(context.active(), work?.package?.trace?.traceparent);
  return carried ? context.with(carried, () => next(input)) : next(input);
};

export function temporalTelemetry(options: TemporalTelemetryOptions): TemporalTelemetry {
  const resource = resourceFromAttributes({ 'service.name': options.serviceName ?? 'handrail-worker' });
  const provider = new BasicTracerProvider({ resource, spanProcessors: [options.spanProcessor] });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  const plugin = options.workflowSpans
    ? new OpenTelemetryPlugin({
        // Typed by the package's own @opentelemetry/resources and sdk-trace-base (1.x); it only
        // reads the resource's attributes and calls the processor's onStart/onEnd, as 2.x has them.
        resource: resource as unknown as OtelPluginOptions['resource'],
        spanProcessor: options.spanProcessor as unknown as OtelPluginOptions['spanProcessor'],
      })
    : new SimplePlugin({
        name: 'handrail.OpenTelemetryActivities',
        workerInterceptors: {
          activity: [
            // First is outermost: the package's trace is the active context when Temporal's span starts.
            () => ({ inbound: { execute: inPackageTrace } }),
            (ctx) => ({
              inbound: new OpenTelemetryActivityInboundInterceptor(ctx),
              outbound: new OpenTelemetryActivityOutboundInterceptor(ctx),
            }),
          ],
        },
      });
  return {
    plugin,
    shutdown: async () => {
      await provider.shutdown();
      trace.disable();
      context.disable();
      propagation.disable();
    },
  };
}
