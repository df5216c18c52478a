import { IllegalStateError } from '@temporalio/common';
import { patched } from '@temporalio/workflow';
import { describe, expect, it } from 'vitest';
import { supportRouting, ticketTriage } from '../../../contracts/pipelines';
import type { Pipeline } from '../../../contracts';
import { startSearchAttributes } from '../../../src/operator/client';
import { sampleJobRequest } from '../../../src/devtools/samples/tickets';
import { jobStart, startingAttributes } from '../../../workflows/rail/first-package';

const request = { ...sampleJobRequest('job-start-1'), budget: { usd: 0.3, revisions: 2 } };
/** A pipeline whose first rule is `first`, the reference relay's after it. */
const startingWith = (first: Pipeline['routes'][number]): Pipeline => ({
  ...ticketTriage,
  routes: [first, ...ticketTriage.routes],
});

describe('where a job starts', () => {
  it('goes to the stage its pipeline routes the entry to', () => {
    expect(jobStart(request, ticketTriage, '').stage).toBe('intake');
    expect(jobStart(request, supportRouting, '').stage).toBe('classify');
  });

  it('shows a first fan-out as the rail does, its stages joined, and a first route that ends the job as the human hop', () => {
    expect(
      jobStart(
        request,
        startingWith({ after: 'ticket.raw', fanOut: ['policy', 'account'], merge: 'context.v1', reason: 'hub' }),
        '',
      ).stage,
    ).toBe('policy+account');
    expect(jobStart(request, startingWith({ after: 'ticket.raw', complete: 'nothing to do' }), '').stage).toBe('human');
  });

  it('shows, before its first hop, the running job at that stage with its whole wallet and no ack yet', () => {
    expect(startingAttributes(request, supportRouting)).toEqual({
      status: 'running',
      stage: 'classify',
      ack: 'none',
      verdict: 'none',
      hops: 0,
      usdRemaining: 0.3,
      pipeline: 'support-routing',
      acks: [],
    });
  });
});

describe('the attributes startJob starts a job with', () => {
  it('are the starting attributes but the empty ack list', () => {
    expect(startSearchAttributes(request, ticketTriage).map((a) => [a.key.name, a.value])).toEqual([
      ['HandrailStatus', 'running'],
      ['HandrailStage', 'intake'],
      ['HandrailAck', 'none'],
      ['HandrailVerdict', 'none'],
      ['HandrailHops', 0],
      ['HandrailUsdRemaining', 0.3],
      ['HandrailPipeline', 'ticket-triage'],
    ]);
  });

  it('are none when the first route asks the workflow API (patched() in a `when`), which only a worker can answer', () => {
    const pipeline = startingWith({
      after: 'ticket.raw',
      when: () => patched('triage-first'),
      to: 'retrieve',
      reason: 'patched route',
    });
    expect(() => startingAttributes(request, pipeline)).toThrow(IllegalStateError);
    expect(startSearchAttributes(request, pipeline)).toEqual([]);
  });
});
