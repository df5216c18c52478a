// The pipeline: stage cards and the routing table between them. Pure data, because the rail
// imports it into Temporal's workflow sandbox: import only `handrail/contracts` and zod here.
import { definePipeline, defineStage } from 'handrail/contracts';
import { z } from 'zod';

/** What a job starts from: one expense claim as the employee filed it. */
export const ExpenseV1 = z.object({
  id: z.string().min(1).max(64),
  employee: z.string().min(1).max(64),
  amount_usd: z.number().positive().max(100_000),
  category: z.enum(['travel', 'meals', 'equipment', 'software', 'other']),
  merchant: z.string().min(1).max(200),
  description: z.string().max(2_000),
});
export type ExpenseV1 = z.infer<typeof ExpenseV1>;

export const extract = defineStage({
  name: 'extract',
  accepts: ['expense.v1'],
  outputs: ['claim.v1'],
  criteria: ['every field of the claim comes from the expense as filed'],
  nominalCostUsd: 0.001,
});

// The two checks run at once; each owns its output type, and the rail merges them into checks.v1.
export const policy = defineStage({
  name: 'policy',
  accepts: ['claim.v1'],
  outputs: ['policy_check.v1'],
  criteria: ['names the limit of the claim’s category and whether the amount is within it'],
  nominalCostUsd: 0.002,
  // A stage that runs beside others is reserved, and charged at most, its worst case.
  worstCaseCostUsd: 0.004,
});

export const fraud = defineStage({
  name: 'fraud',
  accepts: ['claim.v1'],
  outputs: ['fraud_check.v1'],
  criteria: ['flags a merchant on the watch list or a round amount over 1,000 USD'],
  nominalCostUsd: 0.002,
  worstCaseCostUsd: 0.004,
});

// A critic: it judges, and may hold no write tools.
export const approver = defineStage({
  name: 'approver',
  role: 'critic',
  accepts: ['checks.v1'],
  outputs: ['approval.v1'],
  criteria: ['passes only a claim within policy and not flagged'],
  nominalCostUsd: 0.001,
});

// The one stage that writes the payments system, at most once per job.
export const payout = defineStage({
  name: 'payout',
  role: 'writer',
  writes: 'payments',
  reconcile: 'idempotent',
  tools: [{ name: 'payments.pay', access: 'write', system: 'payments' }],
  accepts: ['approval.v1'],
  outputs: ['payout.v1'],
  criteria: ['pays the approved amount to the employee, once'],
  nominalCostUsd: 0.001,
});

export const expenseApproval = definePipeline({
  name: 'expense-approval',
  description: 'Approve an expense claim against policy and fraud checks, then pay it once.',
  entry: {
    type: 'expense.v1',
    schema: ExpenseV1,
    memoryRefs: (expense: ExpenseV1) => [`employee:${expense.employee}`],
  },
  stages: [extract, policy, fraud, approver, payout],
  routes: [
    { after: 'expense.v1', to: 'extract', reason: 'a new claim' },
    { after: 'claim.v1', fanOut: ['policy', 'fraud'], merge: 'checks.v1', reason: 'check policy and fraud at once' },
    { after: 'checks.v1', to: 'approver', reason: 'decide on the checks' },
    { after: 'approval.v1', verdict: 'pass', to: 'payout', reason: 'approved: pay it' },
    // A refused claim has no route on: the rail escalates it to a human, who approves or rejects.
    { after: 'payout.v1', complete: 'paid' },
  ],
});

/** Every pipeline this project runs; the first is a job's default. */
export const pipelines = [expenseApproval] as const;
