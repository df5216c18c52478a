// The stages' work, on the worker: each reads the artifacts it takes, writes the one it makes,
// and reports its cost. Here they are plain rules so the project runs offline; a stage that calls
// a model or an API does it here too (never in the workflow).
import {
  readArtifactBody,
  requireArtifact,
  stageActivities,
  writeArtifact,
  writeOnce,
  MergedBranches,
  type ActivityDeps,
  type HandoffV1,
} from 'handrail';
import { z } from 'zod';
import { ExpenseV1, expenseApproval, payout } from './pipeline.js';

const ClaimV1 = z.object({
  expense_id: z.string(),
  employee: z.string(),
  amount_usd: z.number(),
  category: ExpenseV1.shape.category,
  merchant: z.string(),
});
const PolicyCheckV1 = z.object({ within_policy: z.boolean(), limit_usd: z.number() });
const FraudCheckV1 = z.object({ flagged: z.boolean(), reason: z.string().optional() });
const ApprovalV1 = z.object({ approved: z.boolean(), failures: z.array(z.string()) });
const PayoutV1 = z.object({ payment_id: z.string(), employee: z.string(), amount_usd: z.number() });

/** The most a claim of each category may be, in USD. */
export const LIMITS_USD: Record<ExpenseV1['category'], number> = {
  travel: 2_000,
  meals: 150,
  equipment: 1_500,
  software: 500,
  other: 250,
};
const WATCH_LIST = ['cash advance', 'gift card'];

/** The claim this job is about: the one extract recorded. */
async function claimOf(deps: ActivityDeps, pkg: HandoffV1, stage: string) {
  return readArtifactBody(deps.store, requireArtifact(pkg, stage, 'claim.v1'), ClaimV1);
}

export function expenseActivities(deps: ActivityDeps) {
  return stageActivities(expenseApproval, deps.store, {
    extract: async (pkg) => {
      const expense = await readArtifactBody(deps.store, requireArtifact(pkg, 'extract', 'expense.v1'), ExpenseV1);
      const body = {
        expense_id: expense.id,
        employee: expense.employee,
        amount_usd: expense.amount_usd,
        category: expense.category,
        merchant: expense.merchant,
      };
      return {
        artifact: await writeArtifact(deps.store, 'claim.v1', ClaimV1, body),
        body,
        cost_usd: 0.001,
        summary: `claim ${expense.id}: ${expense.amount_usd} USD ${expense.category}`,
      };
    },
    policy: async (pkg) => {
      const claim = await claimOf(deps, pkg, 'policy');
      const body = {
        within_policy: claim.amount_usd <= LIMITS_USD[claim.category],
        limit_usd: LIMITS_USD[claim.category],
      };
      return {
        artifact: await writeArtifact(deps.store, 'policy_check.v1', PolicyCheckV1, body),
        body,
        cost_usd: 0.002,
      };
    },
    fraud: async (pkg) => {
      const claim = await claimOf(deps, pkg, 'fraud');
      const watched = WATCH_LIST.find((w) => claim.merchant.toLowerCase().includes(w));
      const round = claim.amount_usd > 1_000 && claim.amount_usd % 100 === 0;
      const body = {
        flagged: Boolean(watched) || round,
        ...(watched
          ? { reason: `merchant matches "${watched}"` }
          : round
            ? { reason: 'round amount over 1,000 USD' }
            : {}),
      };
      return { artifact: await writeArtifact(deps.store, 'fraud_check.v1', FraudCheckV1, body), body, cost_usd: 0.002 };
    },
    approver: async (pkg) => {
      // The rail's merge: the branches' artifacts, in the fan-out's order.
      const merged = await readArtifactBody(deps.store, requireArtifact(pkg, 'approver', 'checks.v1'), MergedBranches);
      const branch = (stage: string) => merged.branches.find((b) => b.stage === stage)!.artifact;
      const policyCheck = await readArtifactBody(deps.store, branch('policy'), PolicyCheckV1);
      const fraudCheck = await readArtifactBody(deps.store, branch('fraud'), FraudCheckV1);
      const failures = [
        ...(policyCheck.within_policy ? [] : [`over_limit: over the category limit of ${policyCheck.limit_usd} USD`]),
        ...(fraudCheck.flagged ? [`fraud_flag: ${fraudCheck.reason ?? 'flagged'}`] : []),
      ];
      const body = { approved: failures.length === 0, failures };
      return {
        artifact: await writeArtifact(deps.store, 'approval.v1', ApprovalV1, body),
        body,
        cost_usd: 0.001,
        evaluator: { last_verdict: failures.length === 0 ? 'pass' : 'fail', failures },
      };
    },
    payout: async (pkg) => {
      const claim = await claimOf(deps, pkg, 'payout');
      const paymentId = `pay_${claim.expense_id}`;
      // At most once per job (key job_id:payout:payout.v1), whatever retries or redeliveries come.
      const receipt = await writeOnce(deps.store, payout, pkg, {
        reference: paymentId,
        payload: JSON.stringify({ to: claim.employee, usd: claim.amount_usd }),
      });
      const body = { payment_id: paymentId, employee: claim.employee, amount_usd: claim.amount_usd };
      return {
        artifact: await writeArtifact(deps.store, 'payout.v1', PayoutV1, body),
        body,
        receipt,
        cost_usd: 0.001,
        summary: `paid ${claim.amount_usd} USD (${receipt.status})`,
      };
    },
  });
}
