/**
 * A stage's fold behind the snapshot of its own delivery, settled when the store lacks that
 * snapshot (the shell asked `snapshotHeld`, workflows/run-hop.ts): `foldsBehind` says when to ask,
 * and `concludeHop` refuses such a fold `fold_snapshot_stored`, charged as any refused result,
 * the package going on as delivered. A stage that did not fold is never refused for it.
 */
import { describe, expect, it } from 'vitest';
import type { HandoffV1, StageResult } from '../../../contracts';
import { ticketTriage } from '../../../contracts/pipelines';
import { admitHop, decideHop, stampAck, type HopRequest } from '../../../workflows/rail/hop-decisions';
import { FOLD_SNAPSHOT_INVARIANT, concludeHop, foldsBehind } from '../../../workflows/rail/conclude';
import { DEFAULT_MAX_HOPS } from '../../../workflows/rail/hop-chain';
import { CHUNKS, INTAKE, SUMMARY_2, TICKET, VERDICT, artifactBody, at, emit } from './helpers';

const SNAPSHOT = `handrail://snapshots/job-1/${'5'.repeat(64)}`;
const UNHELD = `the package was folded behind ${SNAPSHOT}, which the store does not hold`;

/** A revision delivered to the drafter (the judge failed the first draft), and its answer:
 * folded behind the delivery's snapshot, or not. */
function revision(folded: boolean, unheldFold?: string) {
  const r: HopRequest = {
    pipeline: ticketTriage,
    stage: 'draft',
    package: at.afterJudge('fail'),
    reason: 'revise',
    maxHops: DEFAULT_MAX_HOPS,
    fallbackTraceparent: '00-0000000000000000000000000000dead-000000000000dead-00',
    fallbackJobId: 'job_fallback',
  };
  const admission = admitHop(r);
  const ack = stampAck(admission, r, decideHop(admission, r, null), new Date(0));
  const delivered: HandoffV1 = { ...admission.arrived!, hop: admission.hop, ack, context_ref: SNAPSHOT };
  const pkg = folded
    ? emit(delivered, SUMMARY_2, {
        artifacts: [TICKET, INTAKE, CHUNKS, VERDICT, SUMMARY_2],
        earlier_artifacts: { count: 1, snapshot: SNAPSHOT },
      })
    : emit(delivered, SUMMARY_2);
  const result: StageResult = { package: pkg, artifact: SUMMARY_2, cost_usd: 0.002, body: artifactBody('summary_md') };
  const card = ticketTriage.get('draft')!;
  return concludeHop(admission, r, ack, new Date(0), null, { result, card, snapshot: SNAPSHOT }, null, unheldFold);
}

describe('a fold behind a snapshot the store does not hold', () => {
  it('is what the shell asks the store about: an accepted package folded behind its own delivery', () => {
    expect(foldsBehind(revision(true), SNAPSHOT)).toBe(true);
    expect(foldsBehind(revision(false), SNAPSHOT)).toBe(false);
    expect(foldsBehind(revision(true), SNAPSHOT.replace(/5{64}$/, '6'.repeat(64)))).toBe(false);
  });

  it('is refused rejected_invariant fold_snapshot_stored, charged, and the package goes on as delivered', () => {
    const outcome = revision(true, UNHELD);
    expect(outcome.ok).toBe(false);
    expect(outcome.acks.map((a) => [a.ack, a.invariant])).toEqual([
      ['accepted', undefined],
      ['rejected_invariant', FOLD_SNAPSHOT_INVARIANT],
    ]);
    expect(outcome.acks[1]!.reason).toContain(SNAPSHOT);
    expect(outcome.costUsd).toBe(0.002);
    expect(outcome.package?.earlier_artifacts).toBeUndefined();
    expect(outcome.package?.artifacts).toEqual(at.afterJudge('fail').artifacts);
  });

  it('refuses nothing when the stage did not fold, whatever the store holds', () => {
    const outcome = revision(false, UNHELD);
    expect(outcome.ok).toBe(true);
    expect(outcome.acks.map((a) => a.ack)).toEqual(['accepted']);
  });
});
