import { describe, expect, it } from 'vitest';
import { Budget, JobResult, LIMITS } from '../../../contracts';
import { addUsd, canPay, charge, spendRevision, topUp } from '../../../workflows/rail/budget';
import { card, fixturePackage } from './helpers';

const wallet = (usd_remaining: number, revisions_remaining = 2): Budget => ({ usd_remaining, revisions_remaining });

describe('canPay', () => {
  it('never pays from a wallet of exactly zero, even a free stage', () => {
    expect(canPay(wallet(0), 0)).toBe(false);
    expect(canPay(wallet(0), card('draft').nominalCostUsd)).toBe(false);
    expect(canPay(fixturePackage('empty-budget.json').budget, 0)).toBe(false);
  });

  it('pays a stage that costs exactly what is left', () => {
    const cost = card('draft').nominalCostUsd;
    expect(canPay(wallet(cost), cost)).toBe(true);
  });

  it('does not pay a stage that costs one micro-dollar more than is left', () => {
    expect(canPay(wallet(0.01), 0.010001)).toBe(false);
  });

  it('lets a free stage run from any non-empty wallet', () => {
    expect(canPay(wallet(0.000001), 0)).toBe(true);
  });

  it('is not fooled by float drift: 0.3 left pays a stage costing 0.1 + 0.2', () => {
    expect(0.3 >= 0.1 + 0.2).toBe(false); // what a naive float comparison would conclude
    expect(canPay(wallet(0.3), 0.1 + 0.2)).toBe(true);
    expect(canPay(wallet(0.1 + 0.2), 0.3)).toBe(true);
  });

  it('treats sub-micro-dollar dust as an empty wallet', () => {
    expect(canPay(wallet(0.1 + 0.2 - 0.3), 0)).toBe(false);
    expect(0.1 + 0.2 - 0.3).toBeGreaterThan(0); // the dust a naive subtraction leaves
  });
});

describe('charge', () => {
  it('subtracts the reported cost and keeps revisions', () => {
    expect(charge(wallet(1.2, 2), 0.01)).toEqual({ budget: wallet(1.19, 2), overspentUsd: 0, chargedUsd: 0.01 });
  });

  it('charging exactly what is left empties the wallet with no overspend', () => {
    expect(charge(wallet(0.005), 0.005)).toEqual({ budget: wallet(0), overspentUsd: 0, chargedUsd: 0.005 });
  });

  it('spends 0.3 as 0.1 then 0.2 down to exactly zero, after which nothing can be paid', () => {
    const { budget } = charge(charge(wallet(0.3), 0.1).budget, 0.2);
    expect(budget.usd_remaining).toBe(0);
    expect(canPay(budget, 0)).toBe(false);
  });

  it('clamps an overspend to zero and reports the overspend exactly', () => {
    const r = charge(wallet(0.005, 1), 0.0123);
    expect(r.budget).toEqual(wallet(0, 1));
    expect(r.overspentUsd).toBe(0.0073);
    expect(Budget.safeParse(r.budget).success).toBe(true);
  });

  it('never grows the wallet from a negative reported cost', () => {
    expect(charge(wallet(0.5), -1)).toEqual({ budget: wallet(0.5), overspentUsd: 0, chargedUsd: 0 });
  });

  it('does not mutate the wallet it is given', () => {
    const w = wallet(1);
    charge(w, 0.4);
    expect(w).toEqual(wallet(1));
  });
});

describe('spendRevision', () => {
  it('takes one revision', () => {
    expect(spendRevision(wallet(1, 2))).toEqual(wallet(1, 1));
    expect(spendRevision(wallet(1, 1))).toEqual(wallet(1, 0));
  });

  it('returns null at zero revisions: the critique loop is over', () => {
    expect(spendRevision(wallet(1, 0))).toBeNull();
  });
});

describe('topUp', () => {
  it('adds dollars and revisions in whole micro-dollars', () => {
    expect(topUp(wallet(0.1, 0), { usd: 0.2, revisions: 1 })).toEqual(wallet(0.3, 1));
  });

  it('refills an empty wallet so the blocked stage can be paid', () => {
    const empty = fixturePackage('empty-budget.json').budget;
    const cost = card('judge').nominalCostUsd;
    expect(canPay(empty, cost)).toBe(false);
    expect(canPay(topUp(empty, { usd: cost }), cost)).toBe(true);
  });

  it('changes only what the human added', () => {
    expect(topUp(wallet(0.5, 1), { revisions: 2 })).toEqual(wallet(0.5, 3));
    expect(topUp(wallet(0.5, 1), { usd: 0.25 })).toEqual(wallet(0.75, 1));
    expect(topUp(wallet(0.5, 1), {})).toEqual(wallet(0.5, 1));
  });
});

describe('addUsd', () => {
  it('sums without float drift', () => {
    expect(addUsd(0.1, 0.2)).toBe(0.3);
    expect([0.001, 0.002, 0.01, 0.005, 0.001].reduce(addUsd, 0)).toBe(0.019);
  });
});

describe('every wallet figure stays finite and within the contract', () => {
  const full = wallet(LIMITS.usd, LIMITS.revisions);

  it('a stage reporting a cost of 1e308 empties the wallet and saturates the overspend', () => {
    const r = charge(wallet(1.2), 1e308);
    expect(r).toEqual({ budget: wallet(0), overspentUsd: LIMITS.usd - 1.2, chargedUsd: 1.2 });
    expect(Budget.safeParse(r.budget).success).toBe(true);
  });

  it('spent sums saturate at the cap instead of becoming Infinity', () => {
    const spent = addUsd(addUsd(0.5, 1e308), 1e308);
    expect(spent).toBe(LIMITS.usd);
    expect(JobResult.shape.spent_usd.safeParse(spent).success).toBe(true);
    expect(addUsd(0, Infinity)).toBe(LIMITS.usd);
    expect(addUsd(0, Number.NaN)).toBe(0);
  });

  it('top-ups saturate at the caps, and the wallet stays valid and payable', () => {
    const topped = topUp(wallet(LIMITS.usd - 1, LIMITS.revisions - 1), {
      usd: 1e308,
      revisions: Number.MAX_SAFE_INTEGER,
    });
    expect(topped).toEqual(full);
    expect(Budget.safeParse(topped).success).toBe(true);
    expect(canPay(topped, 1)).toBe(true);
  });

  it('a full wallet still cannot pay a stage dearer than the cap', () => {
    expect(canPay(full, LIMITS.usd)).toBe(true);
    expect(canPay(full, 1e308)).toBe(false);
    expect(canPay(full, Infinity)).toBe(false);
  });
});
