import { describe, expect, it } from 'vitest';
import { chaosSchedule } from '../../../bench/chaos-run';
import { seededRandom } from '../../../bench/lab';

const opts = { kills: 5, windowMs: 20_000 };

describe('the chaos schedule', () => {
  it('on a cluster: the kills, one server restart and one database restart, all inside the window, in time order', () => {
    for (let seed = 1; seed <= 50; seed++) {
      const events = chaosSchedule(opts, seededRandom(seed), true);
      expect(events.map((e) => e.kind).sort()).toEqual([
        'database-restart',
        'kill',
        'kill',
        'kill',
        'kill',
        'kill',
        'server-restart',
      ]);
      expect(events.every((e) => e.at > 0 && e.at <= opts.windowMs)).toBe(true);
      expect(events.map((e) => e.at)).toEqual(events.map((e) => e.at).sort((a, b) => a - b));
    }
  });

  it('on a dev server: no database restart, and a seed gives the same kills and server restart as on a cluster', () => {
    const onCluster = chaosSchedule(opts, seededRandom(42), true);
    expect(chaosSchedule(opts, seededRandom(42), false)).toEqual(
      onCluster.filter((e) => e.kind !== 'database-restart'),
    );
  });
});
