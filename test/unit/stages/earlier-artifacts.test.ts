/**
 * A stage's worker keeps the package it emits from growing with the job: the superseded artifacts
 * (older drafts and verdicts of a revision loop) move off behind the snapshot it was delivered, and
 * the rail's invariants hold the fold to the contract (Relay checks every hop). Nothing is lost:
 * `jobArtifacts` follows the snapshots back, and a revision still differs from every rejected draft.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createActivities } from '../../../activities/built-in';
import { jobArtifacts } from '../../../activities/artifacts';
import type { HandoffV1 } from '../../../contracts';
import type { Store } from '../../../src/worker/store';
import { Relay, corpusStore, firstPackage, ticketRef } from './helpers';

const rateLimits = {
  id: 'tkt_fold',
  customer_id: 'cus_41',
  subject: 'API',
  body: 'Our nightly batch job hits 429 errors, should we add exponential backoff or ask for a higher quota?',
  channel: 'email',
};

let store: Store;
beforeEach(async () => {
  store = await corpusStore();
});
afterEach(async () => {
  await store.close();
});

/** intake → retrieve → draft → judge, then `revisions` more draft → judge rounds (the judge fails the first draft). */
async function revisionLoop(relay: Relay, revisions: number): Promise<HandoffV1[]> {
  const emitted: HandoffV1[] = [];
  let pkg = firstPackage(ticketRef(rateLimits), { budget: { usd_remaining: 1, revisions_remaining: 5 } });
  for (const stage of ['intake', 'retrieve', 'draft', 'judge'] as const) {
    pkg = (await relay.run(stage, pkg)).package;
    emitted.push(pkg);
  }
  for (let i = 0; i < revisions; i++)
    for (const stage of ['draft', 'judge'] as const) {
      pkg = (await relay.run(stage, pkg)).package;
      emitted.push(pkg);
    }
  return emitted;
}

describe('superseded artifacts, moved off by the stage that emits the package', () => {
  it('keep the package at the entry and the newest of each type, and every artifact stays readable', async () => {
    const relay = new Relay(createActivities({ store }), { snapshots: true });
    const emitted = await revisionLoop(relay, 1);
    const last = emitted.at(-1)!;
    expect(last.evaluator.last_verdict).toBe('pass');
    expect(last.artifacts.map((a) => a.type)).toEqual([
      'ticket.raw',
      'intake.v1',
      'chunks.v1',
      'summary_md',
      'verdict.v1',
    ]);
    expect(last.earlier_artifacts?.count).toBe(2);
    const all = await jobArtifacts(store, last);
    expect(all.map((a) => a.type)).toEqual([
      'ticket.raw',
      'intake.v1',
      'chunks.v1',
      'summary_md',
      'verdict.v1',
      'summary_md',
      'verdict.v1',
    ]);
    // The second draft differs from the first: the drafter read the rejected one back.
    const drafts = all.filter((a) => a.type === 'summary_md');
    expect(new Set(drafts.map((a) => a.uri)).size).toBe(2);
  });

  it('stay on the package when the delivery has no snapshot the stage could store', async () => {
    const relay = new Relay(createActivities({ store }));
    const last = (await revisionLoop(relay, 1)).at(-1)!;
    expect(last.artifacts).toHaveLength(7);
    expect(last.earlier_artifacts).toBeUndefined();
  });

  it('cannot be read back when a snapshot on the way is missing: the read fails closed', async () => {
    const relay = new Relay(createActivities({ store }), { snapshots: true });
    const last = (await revisionLoop(relay, 1)).at(-1)!;
    const forged = { ...last, earlier_artifacts: { count: 2, snapshot: `handrail://snapshots/x/${'0'.repeat(64)}` } };
    await expect(jobArtifacts(store, forged)).rejects.toMatchObject({ type: 'ArtifactInvalid' });
    for (const stored of ['"not a package"', '{"artifacts": [null]}', 'not json']) {
      const sha = await store.putContent(stored);
      const shapeless = { ...last, earlier_artifacts: { count: 2, snapshot: `handrail://snapshots/x/${sha}` } };
      await expect(jobArtifacts(store, shapeless), stored).rejects.toMatchObject({ type: 'ArtifactInvalid' });
    }
  });
});
