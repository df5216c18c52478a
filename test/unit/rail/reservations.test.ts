/**
 * Budget reservations: the pure pieces the rail's fan-out uses (fits, settle, charge,
 * Reservations), and a property over random concurrent branches run the way the rail runs them —
 * every branch admitted before any settles, each accepted one reserving its stage's worst case,
 * settled at most at it, released however it ends.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MICROS_PER_USD, type Budget } from '../../../contracts';
import { Reservations, charge, fits, reportedUsd, settle } from '../../../workflows/rail/budget';

const wallet = (usd_remaining: number): Budget => ({ usd_remaining, revisions_remaining: 2 });
const micros = (usd: number) => Math.round(usd * MICROS_PER_USD);

describe('fits', () => {
  it('counts what running hops hold reserved', () => {
    expect(fits(wallet(0.03), 0, 0.03)).toBe(true);
    expect(fits(wallet(0.03), 0.01, 0.03)).toBe(false);
    expect(fits(wallet(0.03), 0.01, 0.02)).toBe(true);
  });
  it('never fits into a wallet the reservations already empty, not even a free stage', () => {
    expect(fits(wallet(0.02), 0.02, 0)).toBe(false);
    expect(fits(wallet(0.02), 0.05, 0)).toBe(false);
  });
  it('compares whole micro-dollars (0.1 + 0.2 fits 0.3)', () => {
    expect(fits(wallet(0.3), 0.1, 0.2)).toBe(true);
    expect(fits(wallet(0.1 + 0.2), 0, 0.3)).toBe(true);
  });
});

describe('settle', () => {
  it('charges the report when it is within the reservation', () => {
    expect(settle(0.004, 0.002)).toEqual({ settledUsd: 0.002, overspentUsd: 0 });
  });
  it('charges the reservation and reports the rest as overspend when the stage reports more', () => {
    expect(settle(0.004, 0.01)).toEqual({ settledUsd: 0.004, overspentUsd: 0.006 });
  });
  it('charges nothing for a report that is not a real amount', () => {
    expect(settle(0.004, Number.NaN)).toEqual({ settledUsd: 0, overspentUsd: 0 });
    expect(settle(0.004, -1)).toEqual({ settledUsd: 0, overspentUsd: 0 });
  });
});

describe('Reservations', () => {
  it('holds each reservation until it is released, and releasing twice is harmless', () => {
    const held = new Reservations();
    const a = held.reserve('policy', 2, 0.004);
    const b = held.reserve('account', 2, 0.002);
    expect(held.heldUsd).toBe(0.006);
    expect(held.list().map((r) => r.stage)).toEqual(['policy', 'account']);
    held.release(a);
    held.release(a);
    expect(held.heldUsd).toBe(0.002);
    held.release(b);
    expect(held.list()).toEqual([]);
    expect(held.heldUsd).toBe(0);
  });
});

/** One branch: its stage's worst case, what it reports, and how it ends. */
const branch = fc.record({
  maxUsd: fc.integer({ min: 0, max: 50_000 }).map((m) => m / MICROS_PER_USD),
  // Often above the worst case, sometimes not a real amount: stages lie and crash.
  reportedUsd: fc.oneof(
    fc.integer({ min: 0, max: 120_000 }).map((m) => m / MICROS_PER_USD),
    fc.constant(Number.NaN),
    fc.constant(-0.01),
    fc.constant(Infinity),
  ),
  ending: fc.constantFrom('answered', 'answered', 'failed', 'cancelled'),
});

describe('property: concurrent branches against one wallet', () => {
  it('spent ≤ budget in every case, the wallet is never overdrawn, and no reservation outlives its hop', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 100_000 }).map((m) => m / MICROS_PER_USD),
        // Several fan-outs in a row, each of several branches, finishing in any order.
        fc.array(
          fc.array(branch, { minLength: 1, maxLength: 6 }).chain((bs) =>
            fc.tuple(
              fc.constant(bs),
              fc.shuffledSubarray(
                bs.map((_, i) => i),
                { minLength: bs.length },
              ),
            ),
          ),
          { minLength: 1, maxLength: 4 },
        ),
        (startUsd, fanOuts) => {
          let budget = wallet(startUsd);
          let spentMicros = 0;
          const held = new Reservations();
          for (const [branches, finishOrder] of fanOuts) {
            // Admission, in fan-out order, before any branch settles (what the rail does).
            const admitted = branches.map((b) =>
              fits(budget, held.heldUsd, b.maxUsd) ? held.reserve('s', 1, b.maxUsd) : undefined,
            );
            expect(micros(held.heldUsd)).toBeLessThanOrEqual(micros(budget.usd_remaining));
            for (const i of finishOrder) {
              const reservation = admitted[i];
              const b = branches[i]!;
              if (!reservation) continue;
              try {
                if (b.ending === 'cancelled') continue;
                // As concludeHop settles a hop whose card declares its worst case.
                const { settledUsd } = settle(reservation.usd, b.ending === 'failed' ? 0 : reportedUsd(b.reportedUsd));
                const charged = charge(budget, settledUsd);
                // A settled reservation always fits what the wallet holds: never an overdraft.
                expect(charged.overspentUsd).toBe(0);
                budget = charged.budget;
                spentMicros += micros(settledUsd);
              } finally {
                held.release(reservation);
              }
            }
            expect(held.list()).toEqual([]);
          }
          expect(spentMicros).toBeLessThanOrEqual(micros(startUsd));
          expect(spentMicros + micros(budget.usd_remaining)).toBe(micros(startUsd));
          expect(held.heldUsd).toBe(0);
        },
      ),
      { numRuns: 2000 },
    );
  });
});
