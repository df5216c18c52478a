import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { codeRoot } from '../../../src/config';
import { DEFAULT_JOB, InvalidTicketFileError, jobRequestFromFile } from '../../../src/operator/cli/ticket';

const sample = (name: string) => fs.readFileSync(path.join(codeRoot, 'src', 'devtools', 'samples', name), 'utf8');

describe('ticket files for handrail start', () => {
  it('a bare ticket becomes the reference job, keyed by the ticket id', () => {
    const request = jobRequestFromFile(sample('refund-ticket.json'), 'refund-ticket.json', {});
    expect(request).toMatchObject({
      job_id: 'tkt_18422',
      goal: DEFAULT_JOB.goal,
      constraints: DEFAULT_JOB.constraints,
      budget: DEFAULT_JOB.budget,
    });
    expect(request.entry).toMatchObject({ customer_id: 'cus_9' });
  });

  it('flags override a whole job request file, keeping the fields they do not name', () => {
    const request = jobRequestFromFile(sample('refund-job.json'), 'refund-job.json', {
      jobId: 'retry-1',
      budgetUsd: 0.5,
      maxHops: 4,
    });
    expect(request).toMatchObject({
      job_id: 'retry-1',
      budget: { usd: 0.5, revisions: 2 },
      max_hops: 4,
      goal: DEFAULT_JOB.goal,
    });
  });

  it('an invalid ticket names the field as the file spells it', () => {
    const ticket = JSON.parse(sample('refund-ticket.json')) as Record<string, unknown>;
    delete ticket.customer_id;
    const err = (() => {
      try {
        jobRequestFromFile(JSON.stringify(ticket), 't.json', {});
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(InvalidTicketFileError);
    expect((err as InvalidTicketFileError).fields.map((f) => f.path)).toEqual(['customer_id']);
    expect((err as Error).message).toMatch(/^invalid ticket file t\.json: field "customer_id": /);
  });

  it('a file saved with a UTF-8 byte-order mark reads like one without', () => {
    expect(jobRequestFromFile(`\uFEFF${sample('refund-ticket.json')}`, 't.json', {})).toMatchObject({
      job_id: 'tkt_18422',
    });
  });

  it('a negative budget from the flags is refused, naming the field', () => {
    expect(() => jobRequestFromFile(sample('refund-ticket.json'), 't.json', { budgetUsd: -1 })).toThrow(
      /field "budget\.usd": Too small/,
    );
  });

  it('a ticket without an id names "id" once (the job id defaults to it); broken JSON says so', () => {
    const ticket = JSON.parse(sample('refund-ticket.json')) as Record<string, unknown>;
    delete ticket.id;
    expect(() => jobRequestFromFile(JSON.stringify(ticket), 't.json', {})).toThrow(
      /^invalid ticket file t\.json: field "id": [^;]*$/,
    );
    expect(() => jobRequestFromFile('{"id":', 't.json', {})).toThrow(/not valid JSON/);
    expect(() => jobRequestFromFile('[]', 't.json', {})).toThrow(/expected a JSON object/);
  });
});
