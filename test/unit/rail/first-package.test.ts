import { describe, expect, it } from 'vitest';
import { supportRouting, ticketTriage } from '../../../contracts/pipelines';
import { sampleJobRequest } from '../../../src/devtools/samples/tickets';
import { jobStart, startingAttributes } from '../../../workflows/rail/first-package';

const request = { ...sampleJobRequest('job-start-1'), budget: { usd: 0.3, revisions: 2 } };

describe('where a job starts', () => {
  it('goes to the stage its pipeline routes the entry to', () => {
    expect(jobStart(request, ticketTriage, '').stage).toBe('intake');
    expect(jobStart(request, supportRouting, '').stage).toBe('classify');
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
