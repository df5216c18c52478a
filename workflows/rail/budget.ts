/**
 * One wallet per job (seed 001: "a fresh wallet per agent is how fleets overspend").
 * Amounts are kept in whole micro-dollars when compared or subtracted so 0.1 + 0.2 style
 * drift can never let a hop through that the wallet cannot pay.
 */
import type { Budget } from '../../contracts';

const MICRO = 1_000_000;
const micros = (usd: number) => Math.round(usd * MICRO);
const usd = (m: number) => m / MICRO;

/** Can the wallet pay a hop whose stage costs `costUsd`? Zero remaining never can. */
export function canPay(budget: Budget, costUsd: number): boolean {
  const remaining = micros(budget.usd_remaining);
  return remaining > 0 && remaining >= micros(costUsd);
}

/** Subtract what a stage reported. A stage that spent more than was left empties the wallet;
 * the overspend is returned so the job result can report it rather than hide it. */
export function charge(budget: Budget, costUsd: number): { budget: Budget; overspentUsd: number } {
  const remaining = micros(budget.usd_remaining) - micros(Math.max(0, costUsd));
  return {
    budget: { ...budget, usd_remaining: usd(Math.max(0, remaining)) },
    overspentUsd: usd(Math.max(0, -remaining)),
  };
}

/** A revision is paid from `revisions_remaining`; none left means the critique loop is over. */
export function spendRevision(budget: Budget): Budget | null {
  return budget.revisions_remaining > 0 ? { ...budget, revisions_remaining: budget.revisions_remaining - 1 } : null;
}

/** A human top-up: the only way a wallet grows. */
export function topUp(budget: Budget, add: { usd?: number; revisions?: number }): Budget {
  return {
    ...budget,
    usd_remaining: usd(micros(budget.usd_remaining) + micros(add.usd ?? 0)),
    revisions_remaining: budget.revisions_remaining + (add.revisions ?? 0),
  };
}

export function addUsd(a: number, b: number): number {
  return usd(micros(a) + micros(b));
}
