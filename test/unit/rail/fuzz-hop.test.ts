/**
 * The hop fuzz (bench/fuzz.ts, `npm run fuzz`) at a small size: hostile deliveries played
 * in-process exactly as workflows/run-hop.ts plays them, over a real in-memory store, checked against
 * the store after every case — no write without a passing verdict recorded for the job over the
 * written summary, ≤ 1 write per key, every hop acked with a valid AckRecord, and the rail's pure
 * functions never throw.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AckRecord } from '../../../contracts';
import { admitHop } from '../../../workflows/rail/hop-decisions';
import {
  NO_TRACE,
  buildPackage,
  caseArb,
  checkJobWrites,
  createWorld,
  hopRequest,
  playHop,
  relayJob,
  runCase,
  type Finding,
  type World,
} from '../../../bench/fuzz';

// A stage refusing a mutated package is a normal stage failure; anything else is a finding.
const unexpected = (findings: Finding[]) => findings.filter((f) => f.kind !== 'stage_error');

let world: World;
beforeAll(async () => {
  world = await createWorld({ runId: `unit${process.pid}` });
});
afterAll(async () => {
  await world?.close();
});

describe('hop fuzz: hostile deliveries never write without recorded evidence, never double-write, always ack, never crash', () => {
  it('holds over a few hundred cases (most pure, a third through the real stage activities)', async () => {
    await fc.assert(
      fc.asyncProperty(caseArb({ activityShare: 0.35 }), async (c) => {
        const verdict = await runCase(world, c);
        // A hop that ends without an ack is a `missing_ack` finding; a crash is one too (known or not).
        expect(unexpected(verdict.findings)).toEqual([]);
      }),
      { numRuns: 600 },
    );
  }, 20_000);

  it('the oracle is not vacuous: an honest relay writes once, a forged cross-job package writes nothing', async () => {
    const job = await relayJob(world, world.nextId('oracle'), 0);
    expect(job.packages[4]!.evaluator.last_verdict).toBe('pass');
    const first = await playHop(hopRequest(world.pipeline, 'writeback', job.packages[4]), world.deps, world.store);
    expect(first.acks.map((a) => a.ack)).toEqual(['accepted']);
    expect(first.wrote).toBe(true);
    const again = await playHop(hopRequest(world.pipeline, 'writeback', job.packages[4]), world.deps, world.store);
    expect(again.acks.map((a) => a.ack)).toEqual(['duplicate']);

    const forged = buildPackage(world, job, 4, [{ op: 'crossJob' }]);
    expect(forged.forged).toBe(true);
    const refused = await playHop(hopRequest(world.pipeline, 'writeback', forged.pkg), world.deps, world.store);
    expect(refused.wrote).toBe(false);
    expect(refused.failure).toMatch(/not recorded for job/);

    const findings: Finding[] = [];
    expect(await checkJobWrites(world, job.id, findings)).toBe(1);
    for (const id of forged.jobs) await checkJobWrites(world, id, findings);
    expect(findings).toEqual([]);
  });

  it('the store check flags a write no recorded passing verdict backs', async () => {
    const jobId = world.nextId('unbacked');
    await world.store.patchCrmOnce(`${jobId}:writeback:receipt.v1`, {
      ticket_id: `tkt_${jobId}`,
      customer_id: 'cus_1',
      status: 'triaged',
      note: 'written behind the rail',
    });
    const findings: Finding[] = [];
    await checkJobWrites(world, jobId, findings);
    expect(findings.map((f) => f.kind)).toEqual(['false_accept']);
  });
});

describe('findings the fuzz made, fixed (each failed before its fix)', () => {
  const request = (stage: unknown, pkg: unknown) =>
    hopRequest(world.pipeline, stage, pkg, 'direct delivery', { fallbackTraceparent: NO_TRACE });

  it('admitHop does not throw on a JSON stage name like {"toString":1} (String(r.stage) threw)', () => {
    expect(() => admitHop(request(JSON.parse('{"toString":1}'), {}))).not.toThrow();
  });

  it('a package whose hop.count is 2^53-1 is refused as schema-invalid, with a valid AckRecord (it was acked with hop 2^53)', async () => {
    const pkg = {
      ...world.pool[0]!.packages[0]!,
      hop: { from: 'client', to: 'intake', reason: 'x', count: Number.MAX_SAFE_INTEGER, chain: ['client'] },
    };
    const play = await playHop(request('intake', pkg), world.deps, world.store);
    expect(play.acks.map((a) => a.ack)).toEqual(['rejected_schema']);
    expect(AckRecord.safeParse(play.acks[0]).success).toBe(true);
  });
});
