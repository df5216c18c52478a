/**
 * Tracing: every hop is a span under the package's traceparent, and every ack a child span
 * of its hop, exported by the worker that ran the workflow (here into memory).
 */
import { SpanStatusCode, type HrTime } from '@opentelemetry/api';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { newTraceparent } from '../../bench/lab';
import { parseTraceparent } from '../../contracts';
import { cancelJob, decide, startJob } from '../../src/operator/client';
import { statusQuery } from '../../workflows/definitions';
import { firstPackage } from '../../workflows/rail/first-package';
import type { StageHopRequest, StageHopResult } from '../../workflows/stage-hop';
import { jobRequest, startRail, uniqueId, waitForStatus, type Rail } from '../helpers/rail';
import { ticketTriage } from '../../contracts/pipelines/ticket-triage';

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
let rail: Rail;
/** A rail whose drafter takes 3 s, long enough to cancel a job mid-draft. */
let slowDraft: Rail;

beforeAll(async () => {
  rail = await startRail({ tracer: provider.getTracer('handrail-test') });
  slowDraft = await startRail({
    tracer: provider.getTracer('handrail-test'),
    activities: (real) => ({
      draft: async (work) => {
        await new Promise((r) => setTimeout(r, 3_000));
        return real.draft(work);
      },
    }),
  });
});
afterAll(async () => {
  await rail?.stop();
  await slowDraft?.stop();
  await provider.shutdown();
});

const ms = ([seconds, nanos]: HrTime) => seconds * 1_000 + nanos / 1e6;

/** Spans of one trace; sinks run just after the workflow task that reported the hop, so poll. */
async function spansOf(traceId: string, count: number): Promise<ReadableSpan[]> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const spans = exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === traceId);
    if (spans.length >= count || Date.now() > deadline) return spans;
    await new Promise((r) => setTimeout(r, 50));
  }
}

it('a completed job: one hop span per stage under the job traceparent, each with its ack as a child', async () => {
  const tp = newTraceparent();
  const parent = parseTraceparent(tp)!;
  const request = jobRequest({ traceparent: tp });
  const { handle } = await startJob(rail.client, request, rail);
  expect((await handle.result()).status).toBe('completed');

  const spans = await spansOf(parent.traceId, 10);
  const hops = spans
    .filter((s) => s.name.startsWith('hop '))
    .sort((a, b) => Number(a.attributes['handrail.hop']) - Number(b.attributes['handrail.hop']));
  expect(hops.map((s) => s.name)).toEqual([
    'hop client → intake',
    'hop intake → retrieve',
    'hop retrieve → draft',
    'hop draft → judge',
    'hop judge → writeback',
  ]);
  for (const hop of hops) {
    expect(hop.parentSpanContext?.spanId).toBe(parent.parentId);
    expect(hop.attributes).toMatchObject({
      'handrail.job_id': request.job_id,
      'temporal.workflow_id': request.job_id,
      'temporal.workflow_type': 'handoffJob',
    });
    expect(hop.status.code).not.toBe(SpanStatusCode.ERROR);
    const acks = spans.filter((s) => s.parentSpanContext?.spanId === hop.spanContext().spanId);
    expect(acks.map((s) => s.name)).toEqual(['ack accepted']);
    expect(acks[0]!.attributes['handrail.stage']).toBe(hop.attributes['handrail.stage']);
  }
  expect(spans).toHaveLength(10);
});

it('a hub job: each branch is a hop span from the hub, and the merge a span of its own after them', async () => {
  const tp = newTraceparent();
  const parent = parseTraceparent(tp)!;
  const request = jobRequest({ traceparent: tp, pipeline: 'ticket-hub' });
  const { handle } = await startJob(rail.client, request, rail);
  expect((await handle.result()).status).toBe('completed');

  // intake, policy, account, merge, brief, judge, writeback: 7 hop spans, each with one ack.
  const spans = await spansOf(parent.traceId, 14);
  const hops = spans.filter((s) => s.name.startsWith('hop '));
  expect(hops.map((s) => s.name).sort()).toEqual(
    [
      'hop client → intake',
      'hop intake → account',
      'hop intake → merge',
      'hop intake → policy',
      'hop merge → brief',
      'hop brief → judge',
      'hop judge → writeback',
    ].sort(),
  );
  const merge = hops.find((s) => s.name === 'hop intake → merge')!;
  const branchesEnded = Math.max(...hops.filter((s) => /→ (policy|account)$/.test(s.name)).map((s) => ms(s.endTime)));
  expect(ms(merge.startTime)).toBeGreaterThanOrEqual(branchesEnded - 1);
  expect(spans.filter((s) => s.parentSpanContext?.spanId === merge.spanContext().spanId).map((s) => s.name)).toEqual([
    'ack accepted',
  ]);
});

it("a refused hop is an error span with its rejected_* ack under the sender's traceparent, and nothing under it ran", async () => {
  const tp = newTraceparent();
  const parent = parseTraceparent(tp)!;
  const request = jobRequest({ traceparent: tp });
  const { goal: _dropped, ...broken } = firstPackage(request, tp, ticketTriage);
  const hop: StageHopRequest = { stage: 'intake', package: broken };
  const result = await rail.client.workflow.execute<(r: StageHopRequest) => Promise<StageHopResult>>('stageHop', {
    taskQueue: rail.taskQueue,
    workflowId: uniqueId('hop'),
    args: [hop],
  });
  expect(result.ack.ack).toBe('rejected_schema');

  const spans = await spansOf(parent.traceId, 2);
  expect(spans.map((s) => s.name).sort()).toEqual(['ack rejected_schema', 'hop client → intake']);
  const [ack, hopSpan] = [spans.find((s) => s.name.startsWith('ack'))!, spans.find((s) => s.name.startsWith('hop'))!];
  expect(hopSpan.parentSpanContext?.spanId).toBe(parent.parentId);
  expect(hopSpan.status.code).toBe(SpanStatusCode.ERROR);
  expect(hopSpan.attributes['temporal.workflow_type']).toBe('stageHop');
  expect(ack.parentSpanContext?.spanId).toBe(hopSpan.spanContext().spanId);
  expect(ack.status).toMatchObject({ code: SpanStatusCode.ERROR, message: expect.stringMatching(/goal/) });
});

it('an escalation is a hop to the human, spanning from the escalation to the decision, whose ack carries the actor', async () => {
  const tp = newTraceparent();
  const parent = parseTraceparent(tp)!;
  // A wallet too small for the draft: the hop to draft is refused and the job waits for a human.
  const request = jobRequest({ traceparent: tp, budget: { usd: 0.003, revisions: 1 } });
  const { handle } = await startJob(rail.client, request, rail);
  await waitForStatus(handle, 'escalated');
  await decide(rail.client, request.job_id, { action: 'top_up', actor: 'ops.lead', usd: 1 });
  expect((await handle.result()).status).toBe('completed');

  // 7 hops (the refused one and the human's included) and 8 acks.
  const spans = await spansOf(parent.traceId, 15);
  expect(spans).toHaveLength(15);
  const named = (name: string) => spans.filter((s) => s.name === name);
  const children = (span: ReadableSpan) =>
    spans.filter((s) => s.parentSpanContext?.spanId === span.spanContext().spanId);

  const [refused] = named('hop retrieve → draft');
  expect(refused!.status.code).toBe(SpanStatusCode.ERROR);
  expect(children(refused!).map((s) => s.name)).toEqual(['ack rejected_budget']);

  const [human] = named('hop retrieve → human');
  expect(human!.parentSpanContext?.spanId).toBe(parent.parentId);
  const acks = children(human!);
  expect(acks.map((s) => s.attributes['handrail.reason'])).toEqual([
    expect.stringMatching(/^escalated: wallet has \$0/),
    expect.stringMatching(/top_up .* by ops\.lead/),
  ]);
  expect(acks[1]!.attributes['handrail.actor']).toBe('ops.lead');
  // The human's hop lasts until the decision.
  expect(ms(human!.endTime)).toBeGreaterThanOrEqual(ms(acks[1]!.startTime));
  expect(named('hop human → draft')).toHaveLength(1);
});

it('a hop cut short by the job\'s cancellation is still a span: its ack, and the error "cancelled"', async () => {
  const tp = newTraceparent();
  const parent = parseTraceparent(tp)!;
  const request = jobRequest({ traceparent: tp });
  const { handle } = await startJob(slowDraft.client, request, slowDraft);
  for (let view = await handle.query(statusQuery); view.stage !== 'draft'; view = await handle.query(statusQuery)) {
    await new Promise((r) => setTimeout(r, 50));
  }
  await cancelJob(slowDraft.client, request.job_id);
  expect((await handle.result()).status).toBe('cancelled');

  const spans = await spansOf(parent.traceId, 6);
  const [draft] = spans.filter((s) => s.name === 'hop retrieve → draft');
  expect(draft!.status).toEqual({ code: SpanStatusCode.ERROR, message: 'cancelled' });
  expect(spans.filter((s) => s.parentSpanContext?.spanId === draft!.spanContext().spanId).map((s) => s.name)).toEqual([
    'ack accepted',
  ]);
});
