/**
 * One wallet per job, never one per stage: a fresh wallet per agent is how fleets overspend.
 * Amounts are kept in whole micro-dollars when compared or subtracted so 0.1 + 0.2 style
 * drift can never let a hop through that the wallet cannot pay.
 */
import { LIMITS, MICROS_PER_USD, type Budget } from '../../contracts/rail';

const MAX_MICROS = LIMITS.usd * MICROS_PER_USD;
/** Whole micro-dollars saturated to [0, LIMITS.usd], so no figure the rail keeps (wallet, spent,
 * overspent) can leave the contract or become Infinity, whatever a stage reports; NaN counts as 0. */
const micros = (usd: number) => {
  const m = Math.round(usd * MICROS_PER_USD);
  return m > 0 ? Math.min(m, MAX_MICROS) : 0;
};
const usd = (m: number) => m / MICROS_PER_USD;

/** Can the wallet pay a hop whose stage costs `costUsd`? Zero remaining never can. The cost is
 * not saturated: a stage dearer than any wallet can hold is never paid. */
export function canPay(budget: Budget, costUsd: number): boolean {
  const remaining = micros(budget.usd_remaining);
  return remaining > 0 && remaining >= Math.round(costUsd * MICROS_PER_USD);
}

/** Subtract what a stage reported. A stage that spent more than was left empties the wallet;
 * the overspend is returned so the job result can report it rather than hide it. */
export function charge(budget: Budget, costUsd: number): { budget: Budget; overspentUsd: number; chargedUsd: number } {
  const [held, cost] = [micros(budget.usd_remaining), micros(costUsd)];
  return {
    budget: { ...budget, usd_remaining: usd(Math.max(0, held - cost)) },
    overspentUsd: usd(Math.max(0, cost - held)),
    chargedUsd: usd(Math.min(held, cost)),
  };
}

/** A revision is paid from `revisions_remaining`; none left means the critique loop is over. */
export function spendRevision(budget: Budget): Budget | null {
  return budget.revisions_remaining > 0 ? { ...budget, revisions_remaining: budget.revisions_remaining - 1 } : null;
}

/** A human top-up: the only way a wallet grows, up to the contract's caps. */
export function topUp(budget: Budget, add: { usd?: number; revisions?: number }): Budget {
  return {
    ...budget,
    usd_remaining: addUsd(budget.usd_remaining, add.usd ?? 0),
    revisions_remaining: Math.min(LIMITS.revisions, budget.revisions_remaining + (add.revisions ?? 0)),
  };
}

/** A sum saturated at LIMITS.usd. */
export function addUsd(a: number, b: number): number {
  return usd(Math.min(MAX_MICROS, micros(a) + micros(b)));
}

// ---------------------------------------------------------------------------------------------
// Reservations: before a hop starts the rail reserves its stage's worst case (`worstCaseCostUsd`, else
// the nominal cost); after it, it settles what the stage reported — never more than the
// reservation — and releases the rest. Specialists that run at once therefore cannot spend more
// than the wallet together: spent ≤ budget, always.

export interface Reservation {
  readonly id: number;
  readonly stage: string;
  /** The hop it was made for (its ack's hop count). */
  readonly hop: number;
  readonly usd: number;
}

/** What a stage's report counts as: a real, non-negative amount, else nothing (a cost that is
 * not a number is an invariant violation, never a charge). */
export const reportedUsd = (cost: number): number => (Number.isFinite(cost) && cost >= 0 ? cost : 0);

/** Can the wallet, less what running hops hold reserved, hold a reservation of `reserveUsd`? */
export function fits(budget: Budget, heldUsd: number, reserveUsd: number): boolean {
  return canPay(
    { ...budget, usd_remaining: usd(Math.max(0, micros(budget.usd_remaining) - micros(heldUsd))) },
    reserveUsd,
  );
}

/** A settled hop: what the wallet is charged (the reported cost, at most the reservation) and
 * what the stage reported beyond it (the hop's overspend). */
export function settle(reservedUsd: number, reportedUsd: number): { settledUsd: number; overspentUsd: number } {
  const [held, reported] = [micros(reservedUsd), micros(reportedUsd)];
  return { settledUsd: usd(Math.min(held, reported)), overspentUsd: usd(Math.max(0, reported - held)) };
}

/** The reservations a job holds right now, one per running hop. */
export class Reservations {
  private readonly held = new Map<number, Reservation>();
  private nextId = 0;

  reserve(stage: string, hop: number, amountUsd: number): Reservation {
    const reservation = { id: this.nextId++, stage, hop, usd: usd(micros(amountUsd)) };
    this.held.set(reservation.id, reservation);
    return reservation;
  }

  /** Gives a reservation back (settled, refused or cancelled alike); twice is a no-op. */
  release(reservation: Reservation): void {
    this.held.delete(reservation.id);
  }

  get heldUsd(): number {
    return usd([...this.held.values()].reduce((sum, r) => sum + micros(r.usd), 0));
  }

  list(): Reservation[] {
    return [...this.held.values()];
  }
}
