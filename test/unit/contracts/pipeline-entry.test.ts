import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  checkPipeline,
  definePipeline,
  defineStage,
  entryBodyProblems,
  requestEntry,
  validators,
  type PipelineSpec,
} from '../../../contracts';
import { ticketEntry } from '../../../contracts/pipelines/ticket-entry';
import { BUILT_IN_PIPELINES } from '../../../contracts/pipelines';
import { sampleJobRequest } from '../../../src/devtools/samples/tickets';
import { InvalidJobRequestError, parseJobRequest } from '../../../src/operator/client';
import { firstPackage } from '../../../workflows/rail/first-package';

/** A pipeline nobody here wrote: an expense goes to an approver, then a payout writer. */
const Expense = z.object({ id: z.string().min(1), employee: z.string().min(1), usd: z.number().positive() });
const expenseEntry = {
  type: 'expense.v1',
  schema: Expense,
  memoryRefs: (e: z.infer<typeof Expense>) => [`employee:${e.employee}`],
};
const approve = defineStage({
  name: 'approve',
  accepts: ['expense.v1'],
  outputs: ['approval.v1'],
  criteria: ['within policy'],
  nominalCostUsd: 0,
});
const expenseSpec: PipelineSpec = {
  name: 'expenses',
  entry: expenseEntry,
  stages: [approve],
  routes: [
    { after: 'expense.v1', to: 'approve', reason: 'new expense' },
    { after: 'approval.v1', complete: 'approved' },
  ],
};
const expenses = definePipeline(expenseSpec);
const expenseRequest = {
  job_id: 'exp-1',
  pipeline: 'expenses',
  entry: { id: 'E-1', employee: 'ana', usd: 42 },
  goal: 'pay it',
  constraints: [],
  budget: { usd: 1, revisions: 0 },
};

describe("a pipeline's entry", () => {
  it('is declared with its type and schema, and definePipeline lists every problem with it at once', () => {
    expect(expenses.entry).toBe('expense.v1');
    const { entry: _none, ...noEntry } = expenseSpec;
    expect(checkPipeline(noEntry as PipelineSpec)).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^the pipeline declares no entry: give entry: \{ type, schema \}/),
      ]),
    );
    expect(
      checkPipeline({
        ...expenseSpec,
        entry: { type: 'Expense V1', schema: 'zod' as never, memoryRefs: 'x' as never, alias: 'goal' },
      }),
    ).toEqual(
      expect.arrayContaining([
        'entry artifact type "Expense V1" is not a slug',
        'entry schema must be a zod schema (with safeParse) or a precompiled validator function',
        'entry memoryRefs must be a function of the entry body',
        'entry alias "goal" must be a slug naming no field a job request already has',
      ]),
    );
  });

  it('checks a body against a zod schema or a precompiled validator, naming each field', () => {
    expect(entryBodyProblems(Expense, { id: 'E-1', employee: 'ana', usd: 42 })).toEqual([]);
    expect(entryBodyProblems(Expense, { id: 'E-1', usd: -1 })).toEqual([
      expect.stringMatching(/^entry\.employee: /),
      expect.stringMatching(/^entry\.usd: /),
    ]);
    expect(entryBodyProblems(validators.ticketRaw, sampleJobRequest('j').ticket)).toEqual([]);
    expect(entryBodyProblems(validators.ticketRaw, { id: 't', subject: 's', body: 'b' })).toEqual([
      'entry.customer_id: is required',
    ]);
    expect(entryBodyProblems(validators.ticketRaw, 'a ticket')).toEqual([expect.stringMatching(/^entry: /)]);
  });

  it('rides on the first package as a data: URI of its type, with the memory refs the pipeline gives it', () => {
    const pkg = firstPackage(expenseRequest, 'tp', expenses);
    expect(pkg.artifacts).toEqual([
      {
        type: 'expense.v1',
        schema: 'expense.v1',
        uri: `data:application/json,${encodeURIComponent(JSON.stringify(expenseRequest.entry))}`,
      },
    ]);
    expect(pkg.memory_refs).toEqual(['employee:ana']);
  });

  it('a ticket request as requests carried it before `entry` (`ticket`) starts the same first package as one with `entry`', () => {
    const { ticket, ...rest } = sampleJobRequest('job-compat');
    const asEntry = { ...rest, entry: ticket };
    expect(requestEntry(asEntry, ticketEntry)).toBe(ticket);
    expect(requestEntry({ ...rest, ticket }, ticketEntry)).toBe(ticket);
    expect(firstPackage(asEntry, 'tp', { entry: 'ticket.raw', entrySpec: ticketEntry })).toEqual(
      firstPackage({ ...rest, ticket }, 'tp', { entry: 'ticket.raw', entrySpec: ticketEntry }),
    );
    expect(firstPackage(asEntry, 'tp', { entry: 'ticket.raw', entrySpec: ticketEntry }).memory_refs).toEqual([
      'customer_id:cus_9',
    ]);
  });
});

describe('a client starting a job checks the entry as the rail will', () => {
  const refused = (input: unknown) => {
    try {
      parseJobRequest(input, [expenses]);
    } catch (err) {
      if (err instanceof InvalidJobRequestError) return err.issues;
      throw err;
    }
    return [];
  };

  it('valid: starts', () => {
    expect(refused(expenseRequest)).toEqual([]);
  });

  it('invalid: names the field under entry', () => {
    expect(refused({ ...expenseRequest, entry: { id: 'E-1', employee: 'ana', usd: 'lots' } })).toEqual([
      { path: 'entry.usd', message: expect.any(String) },
    ]);
  });

  it('a request holding only its job id: every missing field named at once, the entry too, each as Required', () => {
    const issues = refused({ job_id: 'exp-only' });
    expect(issues.map((i) => i.path).sort()).toEqual(['budget', 'constraints', 'entry', 'goal']);
    expect(issues.map((i) => i.message.split(' (')[0])).toEqual(issues.map(() => 'Required'));
  });

  it('missing: says what the pipeline takes', () => {
    const { entry: _gone, ...missing } = expenseRequest;
    expect(refused(missing)).toEqual([{ path: 'entry', message: 'Required (a expense.v1)' }]);
  });

  it('a ticket pipeline names the field a `ticket` request used, and refuses both at once', () => {
    const request = sampleJobRequest('job-c');
    const { customer_id: _gone, ...ticket } = request.ticket;
    expect(() => parseJobRequest({ ...request, ticket }, BUILT_IN_PIPELINES)).toThrow(
      /^invalid job request: ticket\.customer_id: /,
    );
    expect(() => parseJobRequest({ ...request, entry: request.ticket }, BUILT_IN_PIPELINES)).toThrow(
      /give the ticket\.raw as entry only, not also as ticket/,
    );
  });
});
