import { describe, expect, it } from 'vitest';
import { Hop } from '../../../contracts';
import { ticketTriage } from '../../../contracts/pipelines/ticket-triage';
import {
  DEFAULT_MAX_HOPS,
  HUMAN,
  ORIGIN,
  deliveryKey,
  edgeSender,
  exceedsHopCap,
  isCycle,
  nextHop,
} from '../../../workflows/rail/hop-chain';
import { at, relayHop } from './helpers';

describe('nextHop', () => {
  it('makes the first delivery hop 0 from the client', () => {
    const hop = nextHop(undefined, 'intake', 'new ticket');
    expect(hop).toEqual({ from: ORIGIN, to: 'intake', reason: 'new ticket', count: 0, chain: [ORIGIN, 'intake'] });
    expect(Hop.safeParse(hop).success).toBe(true);
  });

  it('counts each transfer between stages and sends from the current holder', () => {
    const hop = relayHop(['intake', 'retrieve', 'draft', 'judge', 'writeback'])!;
    expect(hop).toMatchObject({ from: 'judge', to: 'writeback', count: 4 });
    expect(hop.chain).toEqual([ORIGIN, 'intake', 'retrieve', 'draft', 'judge', 'writeback']);
  });

  it('counts the planned relay as 4 transfers and each revision as 2 more, so two revisions fit the default cap', () => {
    expect(relayHop(['intake', 'retrieve', 'draft', 'judge', 'writeback'])!.count).toBe(4);
    expect(relayHop(['intake', 'retrieve', 'draft', 'judge', 'draft', 'judge', 'writeback'])!.count).toBe(6);
    expect(
      relayHop(['intake', 'retrieve', 'draft', 'judge', 'draft', 'judge', 'draft', 'judge', 'writeback'])!.count,
    ).toBe(DEFAULT_MAX_HOPS);
  });

  it('does not count the hop to a human or the hop a human sends', () => {
    const atJudge = relayHop(['intake', 'retrieve', 'draft', 'judge'])!;
    const toHuman = nextHop(atJudge, HUMAN, 'revisions exhausted');
    expect(toHuman).toMatchObject({ from: 'judge', to: HUMAN, count: atJudge.count });
    const fromHuman = nextHop(toHuman, 'draft', 'revise', HUMAN);
    expect(fromHuman).toMatchObject({ from: HUMAN, to: 'draft', count: atJudge.count });
    expect(nextHop(fromHuman, 'judge', 'judge it').count).toBe(atJudge.count + 1);
  });

  it('does not mutate the hop it extends', () => {
    const hop = relayHop(['intake'])!;
    const copy = structuredClone(hop);
    nextHop(hop, 'retrieve', 'x');
    expect(hop).toEqual(copy);
  });
});

describe('exceedsHopCap', () => {
  const withCount = (count: number): Hop => ({ from: 'a', to: 'b', reason: 'r', count, chain: ['a', 'b'] });

  it('allows the last hop (count equal to the cap) and refuses the next', () => {
    expect(exceedsHopCap(withCount(DEFAULT_MAX_HOPS), DEFAULT_MAX_HOPS)).toBe(false);
    expect(exceedsHopCap(withCount(DEFAULT_MAX_HOPS + 1), DEFAULT_MAX_HOPS)).toBe(true);
  });

  it('honours a per-job cap', () => {
    expect(exceedsHopCap(withCount(3), 3)).toBe(false);
    expect(exceedsHopCap(withCount(4), 3)).toBe(true);
  });

  it('counts the cap afresh from the last human decision', () => {
    expect(exceedsHopCap(withCount(9), 8, 8)).toBe(false);
    expect(exceedsHopCap(withCount(16), 8, 8)).toBe(false);
    expect(exceedsHopCap(withCount(17), 8, 8)).toBe(true);
  });
});

describe('isCycle', () => {
  const hopAfter = (path: string[], to: string, by?: string) => nextHop(relayHop(path), to, 'x', by);

  it('sees draft → retrieve → draft as a cycle', () => {
    expect(isCycle(hopAfter(['intake', 'retrieve', 'draft'], 'retrieve'), ticketTriage.revisits)).toBe(true);
    expect(isCycle(hopAfter(['intake', 'retrieve', 'draft', 'retrieve'], 'draft'), ticketTriage.revisits)).toBe(true);
  });

  it('sees an A → B → A bounce between non-planned stages as a cycle', () => {
    expect(isCycle(hopAfter(['intake', 'retrieve'], 'intake'), ticketTriage.revisits)).toBe(true);
  });

  it('plans the critique loop in both directions: judge → draft and draft → judge revisits', () => {
    expect(ticketTriage.revisits).toEqual(
      expect.arrayContaining([
        { from: 'judge', to: 'draft', bound: 'revisions' },
        { from: 'draft', to: 'judge', bound: 'revisions' },
      ]),
    );
    expect(isCycle(hopAfter(['intake', 'retrieve', 'draft', 'judge'], 'draft'), ticketTriage.revisits)).toBe(false);
    expect(isCycle(hopAfter(['intake', 'retrieve', 'draft', 'judge', 'draft'], 'judge'), ticketTriage.revisits)).toBe(
      false,
    );
  });

  it('lets a human send work to any stage already visited', () => {
    const escalated = nextHop(relayHop(['intake', 'retrieve', 'draft', 'judge']), HUMAN, 'x');
    for (const to of ['intake', 'retrieve', 'draft', 'judge']) {
      expect(isCycle(nextHop(escalated, to, 'resume', HUMAN), ticketTriage.revisits)).toBe(false);
    }
  });

  it('allows an edge bounded by { max: n } n times, and calls the next time a cycle', () => {
    const bounded = [{ from: 'judge', to: 'draft', bound: { max: 1 } }] as const;
    expect(isCycle(hopAfter(['intake', 'retrieve', 'draft', 'judge'], 'draft'), bounded)).toBe(false);
    expect(isCycle(hopAfter(['intake', 'retrieve', 'draft', 'judge', 'draft', 'judge'], 'draft'), bounded)).toBe(true);
    // Bounded by the wallet instead, the second revisit is the routing table's call, not a cycle.
    expect(
      isCycle(hopAfter(['intake', 'retrieve', 'draft', 'judge', 'draft', 'judge'], 'draft'), ticketTriage.revisits),
    ).toBe(false);
  });

  it('does not call a first visit a cycle', () => {
    expect(isCycle(hopAfter([], 'intake'), ticketTriage.revisits)).toBe(false);
    expect(isCycle(hopAfter(['intake', 'retrieve', 'draft', 'judge'], 'writeback'), ticketTriage.revisits)).toBe(false);
  });
});

describe('deliveryKey', () => {
  it('is job_id:stage:0 before the first delivery', () => {
    const pkg = at.start();
    expect(deliveryKey(pkg, 'intake')).toBe(`${pkg.job_id}:intake:0`);
  });

  it('is the same for the same package delivered twice to the same stage', () => {
    expect(deliveryKey(at.afterDraft(), 'judge')).toBe(deliveryKey(structuredClone(at.afterDraft()), 'judge'));
  });

  it('differs for a revision reaching the same stage later', () => {
    const first = at.afterRetrieve();
    const revision = at.afterJudge('fail');
    expect(deliveryKey(first, 'draft')).not.toBe(deliveryKey(revision, 'draft'));
  });

  it('differs per stage for the same package', () => {
    expect(deliveryKey(at.afterDraft(), 'judge')).not.toBe(deliveryKey(at.afterDraft(), 'draft'));
  });
});

describe('edgeSender', () => {
  const hop = (chain: string[], from: string, to: string): Hop => ({
    from,
    to,
    reason: 'r',
    count: 3,
    chain: [...chain, to],
  });

  it('is the sender for a hop between stages', () => {
    expect(edgeSender(ticketTriage, hop([ORIGIN, 'intake', 'retrieve'], 'retrieve', 'draft'), at.afterRetrieve())).toBe(
      'retrieve',
    );
  });

  it('for work a human sent on, is the stage that made the newest artifact: the refused retrieve → draft hop keeps its edge', () => {
    // draft was refused, the job escalated, a human approved: the chain ends draft, human, draft.
    const resumed = hop([ORIGIN, 'intake', 'retrieve', 'draft', HUMAN], HUMAN, 'draft');
    expect(edgeSender(ticketTriage, resumed, at.afterRetrieve())).toBe('retrieve');
    const revised = hop([ORIGIN, 'intake', 'retrieve', 'draft', 'judge', HUMAN], HUMAN, 'draft');
    expect(edgeSender(ticketTriage, revised, at.afterJudge('fail'))).toBe('judge');
  });

  it('stays the human when no stage of the chain made the newest artifact (nothing to hand over)', () => {
    expect(edgeSender(ticketTriage, hop([ORIGIN, HUMAN], HUMAN, 'intake'), at.start())).toBe(HUMAN);
  });
});
