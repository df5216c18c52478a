import { describe, expect, it } from 'vitest';
import { landingChooser } from '../../../bench/chaos-writes';

/** The worst luck a seed can bring: every draw misses. */
const neverDrawn = () => 0.99;

describe('where write chaos lands its kills and faults (landingChooser)', () => {
  it('first: the first occasions take every kill, whatever the draws, and no more than the budget', () => {
    const lands = landingChooser('first', 2, 0.5, neverDrawn);
    expect([lands(), lands(), lands(), lands()]).toEqual([true, true, false, false]);
  });

  it('drawn: an occasion lands only when its draw is under the chance, up to the budget', () => {
    const draws = [0.1, 0.9, 0.2, 0.3];
    const lands = landingChooser('drawn', 2, 0.5, () => draws.shift()!);
    expect([lands(), lands(), lands(), lands()]).toEqual([true, false, true, false]);
    expect([landingChooser('drawn', 3, 0.5, neverDrawn)()]).toEqual([false]);
  });
});
