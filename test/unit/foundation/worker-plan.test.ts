/**
 * The per-stage split: every stage that writes runs on the writers' queue next to the
 * job's, and only the writer side registers it; the general side registers everything else and
 * no writer at all.
 */
import { describe, expect, it } from 'vitest';
import { stageTaskQueue, writerTaskQueue } from '../../../contracts';
import { BUILT_IN_PIPELINES } from '../../../contracts/pipelines';
import { workerRole } from '../../../src/config';
import { stageCards, workerPlan } from '../../../src/worker/worker';

const { cards } = stageCards(BUILT_IN_PIPELINES);
const writers = cards.filter((c) => c.writes !== null).map((c) => c.name);

describe('per-stage workers', () => {
  it('the built-in writers are ticket-triage writeback, support-routing crm-note and research-brief writer, on <queue>-writer', () => {
    expect(writers.sort()).toEqual(['crm-note', 'writeback', 'writer']);
    expect(writerTaskQueue('handrail')).toBe('handrail-writer');
    for (const card of cards)
      expect(stageTaskQueue(card, 'handrail')).toBe(card.writes !== null ? 'handrail-writer' : 'handrail');
    // A card's own queue wins, writer or not.
    expect(stageTaskQueue({ writes: 'crm', taskQueue: 'crm-eu' }, 'handrail')).toBe('crm-eu');
  });

  it('general registers every stage but the writers, on the job queue; writer only the writers, on theirs', () => {
    const general = workerPlan(cards, 'general', 'handrail');
    expect([...general.job!].sort()).toEqual(
      cards
        .map((c) => c.name)
        .filter((n) => !writers.includes(n))
        .sort(),
    );
    expect(general.own.size).toBe(0);

    const writer = workerPlan(cards, 'writer', 'handrail');
    expect(writer.job).toBeNull();
    expect([...writer.own]).toEqual([['handrail-writer', expect.arrayContaining(writers)]]);
    expect(writer.own.get('handrail-writer')).toHaveLength(writers.length);

    const all = workerPlan(cards, 'all', 'handrail');
    expect(all.job).toEqual(general.job);
    expect(all.own).toEqual(writer.own);
  });

  it('HANDRAIL_WORKER_ROLE is all by default and refuses anything else than all, general, writer', () => {
    expect(workerRole({})).toBe('all');
    expect(workerRole({ HANDRAIL_WORKER_ROLE: 'writer' })).toBe('writer');
    expect(() => workerRole({ HANDRAIL_WORKER_ROLE: 'crm' })).toThrow(/all, general, writer/);
  });
});
