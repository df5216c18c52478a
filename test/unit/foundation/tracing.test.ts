import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { context, SpanStatusCode, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { beforeEach, describe, expect, it, onTestFinished } from 'vitest';
import type { AckRecord } from '../../../contracts';
import { inPackageTrace } from '../../../src/worker/otel';
import { recordHop, tracingFromEnv } from '../../../src/worker/tracing';
import type { HopTrace } from '../../../workflows/tracing';

const exporter = new InMemorySpanExporter();
const tracer = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }).getTracer('test');
const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const SENDER = '00f067aa0ba902b7';

function ack(overrides: Partial<AckRecord> = {}): AckRecord {
  return {
    ack: 'accepted',
    stage: 'draft',
    hop: 2,
    reason: 'schema valid',
    delivery_key: 'job-1:draft:3',
    traceparent: `00-${TRACE_ID}-${SENDER}-01`,
    at: '2026-11-29T10:00:01.000Z',
    ...overrides,
  };
}

function hop(overrides: Partial<HopTrace> = {}): HopTrace {
  return {
    job_id: 'job-1',
    stage: 'draft',
    from: 'retrieve',
    reason: 'draft from cited chunks',
    traceparent: `00-${TRACE_ID}-${SENDER}-01`,
    started_at: Date.parse('2026-11-29T10:00:01.000Z'),
    ended_at: Date.parse('2026-11-29T10:00:03.000Z'),
    acks: [ack()],
    cost_usd: 0.01,
    ...overrides,
  };
}

beforeEach(() => exporter.reset());

describe('hop spans', () => {
  it('hangs the hop under the sender span of the traceparent, with its acks as children, at workflow time', () => {
    recordHop(tracer, hop(), { workflowId: 'job-1', runId: 'run-1', workflowType: 'handoffJob' });
    const [ackSpan, hopSpan] = exporter.getFinishedSpans();
    expect(hopSpan!.name).toBe('hop retrieve → draft');
    expect(hopSpan!.spanContext().traceId).toBe(TRACE_ID);
    expect(hopSpan!.parentSpanContext?.spanId).toBe(SENDER);
    expect(hopSpan!.attributes).toMatchObject({
      'handrail.job_id': 'job-1',
      'handrail.delivery_key': 'job-1:draft:3',
      'handrail.cost_usd': 0.01,
      'temporal.run_id': 'run-1',
    });
    expect(hopSpan!.duration).toEqual([2, 0]);
    expect(hopSpan!.status.code).toBe(SpanStatusCode.UNSET);
    expect(ackSpan!.name).toBe('ack accepted');
    expect(ackSpan!.parentSpanContext?.spanId).toBe(hopSpan!.spanContext().spanId);
  });

  it('marks a refused hop and its rejecting ack as errors, and a stage failure on the hop', () => {
    recordHop(tracer, hop({ acks: [ack({ ack: 'rejected_budget', reason: 'wallet has $0' })] }));
    const [ackSpan, hopSpan] = exporter.getFinishedSpans();
    expect(ackSpan!.status).toEqual({ code: SpanStatusCode.ERROR, message: 'wallet has $0' });
    expect(hopSpan!.status).toEqual({ code: SpanStatusCode.ERROR, message: 'rejected_budget: wallet has $0' });

    exporter.reset();
    recordHop(tracer, hop({ failure: 'stage unavailable: no "draft" worker picked the hop up within 1m' }));
    expect(exporter.getFinishedSpans()[1]!.status).toEqual({
      code: SpanStatusCode.ERROR,
      message: 'stage unavailable: no "draft" worker picked the hop up within 1m',
    });
  });

  it('starts a trace of its own when the traceparent is unusable, and records nothing when the sender did not sample', () => {
    recordHop(tracer, hop({ traceparent: 'not-a-traceparent' }));
    const hopSpan = exporter.getFinishedSpans().find((s) => s.name.startsWith('hop'))!;
    expect(hopSpan.parentSpanContext).toBeUndefined();
    expect(hopSpan.spanContext().traceId).not.toBe(TRACE_ID);

    exporter.reset();
    recordHop(tracer, hop({ traceparent: `00-${TRACE_ID}-${SENDER}-00` }));
    expect(exporter.getFinishedSpans()).toHaveLength(0);
  });
});

describe('export', () => {
  it('with OTEL_EXPORTER_OTLP_ENDPOINT set, the worker posts its hop spans there (OTLP/HTTP) when it shuts down', async () => {
    const received: { url?: string; bytes: number }[] = [];
    const collector = http.createServer((req, res) => {
      let bytes = 0;
      req.on('data', (chunk: Buffer) => (bytes += chunk.length));
      req.on('end', () => {
        received.push({ url: req.url, bytes });
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = collector.address() as AddressInfo;
      const tracing = await tracingFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}` });
      recordHop(tracing.tracer, hop());
      await tracing.shutdown();
      expect(received).toHaveLength(1);
      expect(received[0]!.url).toBe('/v1/traces');
      expect(received[0]!.bytes).toBeGreaterThan(0);
    } finally {
      collector.close();
    }
  });
});

describe('stage activities in the package trace', () => {
  it('runs a stage activity in the trace its package carries, and any other activity in the context it has', async () => {
    const traceparent = `00-${TRACE_ID}-${SENDER}-01`;
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    onTestFinished(() => context.disable());
    const seen = (args: unknown[]) =>
      inPackageTrace({ args, headers: {} } as unknown as Parameters<typeof inPackageTrace>[0], async () =>
        trace.getSpanContext(context.active()),
      );
    expect(await seen([{ stage: 'draft', package: { trace: { traceparent } } }])).toMatchObject({
      traceId: TRACE_ID,
      spanId: SENDER,
      isRemote: true,
    });
    expect(await seen(['job-1'])).toBeUndefined();
    expect(await seen([{ package: { trace: { traceparent: 'not-a-traceparent' } } }])).toBeUndefined();
  });
});
