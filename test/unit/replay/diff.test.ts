/** The pure side of `replay --diff`: what counts as a difference, and how a recorded hop is read back. */
import { describe, expect, it } from 'vitest';
import type { Hop, StageResult } from '../../../contracts';
import { ackDifference, arrivedHop, routeDifference, stageDifferences } from '../../../src/replay/diff';
import { HUMAN, nextHop } from '../../../workflows/rail/hop-chain';
import { relayHop } from '../rail/helpers';

describe('replay --diff: the comparisons', () => {
  const result = (uri: string, cost: number, body: unknown): StageResult =>
    ({ artifact: { type: 'receipt.v1', uri, schema: 'receipt.v1' }, cost_usd: cost, body }) as StageResult;

  it('routes: a hop, a fan-out branch, and anything else named', () => {
    expect(routeDifference({ kind: 'hop', to: 'judge', reason: 'r', package: {} as never }, 'judge')).toBeUndefined();
    expect(routeDifference({ kind: 'complete', reason: 'done' }, 'judge')).toEqual({
      what: 'route',
      recorded: 'judge',
      now: 'complete (done)',
    });
    expect(routeDifference(undefined, 'judge')).toEqual({
      what: 'route',
      recorded: 'judge',
      now: 'escalate (the hop did not pass)',
    });
  });

  it('acks: states and the invariant a rejection names', () => {
    expect(ackDifference([{ ack: 'accepted' }], [{ ack: 'accepted' }])).toBeUndefined();
    expect(
      ackDifference(
        [{ ack: 'accepted' }],
        [{ ack: 'accepted' }, { ack: 'rejected_invariant', invariant: 'cites_exist' }],
      ),
    ).toEqual({ what: 'ack', recorded: 'accepted', now: 'accepted, rejected_invariant (cites_exist)' });
  });

  it('stages: the artifact address and the cost; bodies that differ only in time stamps are the same artifact', () => {
    const recorded = {
      result: result('handrail://artifacts/a', 0.001, { status: 'created', written_at: '2026-12-01T14:49:50.164Z' }),
    };
    expect(
      stageDifferences(recorded, {
        result: result('handrail://artifacts/b', 0.001, { status: 'created', written_at: '2026-12-02T08:00:00.000Z' }),
      }),
    ).toEqual([]);
    expect(
      stageDifferences(recorded, {
        result: result('handrail://artifacts/c', 0.002, { status: 'updated', written_at: '2026-12-02T08:00:00.000Z' }),
      }),
    ).toEqual([
      { what: 'artifact', recorded: 'receipt.v1 handrail://artifacts/a', now: 'receipt.v1 handrail://artifacts/c' },
      { what: 'cost', recorded: '$0.001', now: '$0.002' },
    ]);
    expect(stageDifferences(recorded, { failure: 'ArtifactInvalid: gone' })).toEqual([
      { what: 'stage', recorded: 'receipt.v1 handrail://artifacts/a', now: 'failed: ArtifactInvalid: gone' },
    ]);
  });
});

describe('arrivedHop', () => {
  const hop = (chain: string[], from: string, count: number): Hop => ({
    from,
    to: chain.at(-1)!,
    reason: 'r',
    count,
    chain,
  });

  it("the job's first delivery arrived with no hop; a later one with the hop it follows", () => {
    expect(arrivedHop(hop(['client', 'intake'], 'client', 0), undefined)).toBeUndefined();
    const previous = hop(['client', 'intake'], 'client', 0);
    expect(arrivedHop(hop(['client', 'intake', 'retrieve'], 'intake', 1), previous)).toBe(previous);
  });

  it('on a chain longer than a package keeps, the hop it follows, or the human hop between them', () => {
    const path = Array.from({ length: 200 }, (_, i) => (i % 2 ? 'judge' : 'draft'));
    const previous = relayHop(path)!;
    expect(arrivedHop(nextHop(previous, 'draft', 'revise'), previous)).toBe(previous);
    const human = nextHop(previous, HUMAN, 'escalated');
    expect(arrivedHop(nextHop(human, 'draft', 'revise', HUMAN), previous)).toEqual({ ...human, reason: 'escalated' });
  });

  it("after a human's decision, the human's hop: same count, the chain up to the human", () => {
    expect(
      arrivedHop(
        hop(['client', 'intake', 'retrieve', 'human', 'draft'], 'human', 1),
        hop(['client', 'intake', 'retrieve'], 'intake', 1),
      ),
    ).toEqual({
      from: 'retrieve',
      to: 'human',
      reason: 'escalated',
      count: 1,
      chain: ['client', 'intake', 'retrieve', 'human'],
    });
  });
});
