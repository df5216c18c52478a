/**
 * The hop fuzz (bench/fuzz.ts) through the real `stageHop` workflow on the dev server: forged and
 * mutated writeback and intake deliveries — forged data: evidence, another job's artifacts, a
 * verdict flipped to pass, hostile budgets and hop blocks, replays and concurrent twins — checked
 * against the rail's store: no write without a passing verdict recorded for the job over the
 * written summary, at most one write per key, every result acked with a valid AckRecord.
 * `FUZZ_SEED=n` replays a run.
 */
import { WorkflowFailedError } from '@temporalio/client';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HandoffV1 } from '../../contracts';
import type { StageHopRequest, StageHopResult } from '../../workflows/stage-hop';
import { firstPackage } from '../../workflows/rail/first-package';
import {
  buildPackage,
  checkAcks,
  checkJobWrites,
  mutationArb,
  type Finding,
  type Job,
  type Mutation,
} from '../../bench/fuzz';
import { jobRequest, startRail, uniqueId, type Rail } from '../helpers/rail';
import { SEED_TRACEPARENT } from '../scenarios';
import { ticketTriage } from '../../contracts/pipelines/ticket-triage';

const TRACE = SEED_TRACEPARENT;
const CASES = 25;
const SEED = Number(process.env.FUZZ_SEED ?? Date.now() % 1_000_000_007);

/** The one known open finding this path can reach (test/unit/rail/fuzz-hop.test.ts pins it). */
const known = (f: Finding) => f.kind === 'invalid_ack' && /hop Too big/.test(f.detail);

let rail: Rail;
const jobs: Job[] = [];

function hop(request: StageHopRequest): Promise<StageHopResult> {
  return rail.client.workflow.execute<(r: StageHopRequest) => Promise<StageHopResult>>('stageHop', {
    taskQueue: rail.taskQueue,
    workflowId: uniqueId('fuzz-hop'),
    args: [request],
  });
}

/** A ticket relayed honestly intake → judge with stageHop; packages[i] is ready for the i-th stage. */
async function relayed(): Promise<Job> {
  const request = jobRequest();
  let pkg: HandoffV1 = firstPackage(request, TRACE, ticketTriage);
  const packages = [pkg];
  for (const stage of ['intake', 'retrieve', 'draft', 'judge']) {
    const res = await hop({ stage, package: pkg });
    expect(res.ack.ack, `${stage}: ${res.ack.reason}`).toBe('accepted');
    pkg = res.package!;
    packages.push(pkg);
  }
  expect(pkg.evaluator.last_verdict).toBe('pass');
  return { id: request.job_id, ticketId: request.ticket.id, packages, results: [] };
}

interface HopCase {
  job: number;
  target: 'writeback' | 'intake';
  mutations: Mutation[];
  delivery: 'once' | 'twice' | 'concurrent';
  deliveryId?: string;
}

const hopCase: fc.Arbitrary<HopCase> = fc.record({
  job: fc.nat(),
  target: fc.constantFrom('writeback' as const, 'writeback' as const, 'writeback' as const, 'intake' as const),
  mutations: fc.array(mutationArb, { minLength: 1, maxLength: 3 }),
  delivery: fc.constantFrom('once' as const, 'once' as const, 'twice' as const, 'concurrent' as const),
  deliveryId: fc.option(fc.string({ maxLength: 40 }), { nil: undefined }),
});

beforeAll(async () => {
  rail = await startRail();
  jobs.push(...(await Promise.all([relayed(), relayed()])));
});
afterAll(async () => {
  await rail?.stop();
});

describe(`hop fuzz through stageHop (seed ${SEED})`, () => {
  it(`${CASES} forged or mutated writeback / intake deliveries: no unbacked write, ≤ 1 write per key, every result acked`, async () => {
    const world = {
      pool: jobs,
      nextId: (prefix: string) => uniqueId(prefix),
      store: rail.store,
      verified: new Set<string>(),
    };
    const findings: (Finding & { case: number })[] = [];
    const acks: Record<string, number> = {};
    let envelopeRefusals = 0;
    for (const [i, c] of fc.sample(hopCase, { seed: SEED, numRuns: CASES }).entries()) {
      const base = jobs[c.job % jobs.length]!;
      const built = buildPackage(world, base, c.target === 'writeback' ? 4 : 0, c.mutations);
      const before = new Map<string, number>();
      for (const id of built.jobs) before.set(id, (await rail.store.listWrites(id)).length);
      const request: StageHopRequest = {
        stage: c.target,
        package: built.pkg,
        ...(c.deliveryId !== undefined ? { delivery_id: c.deliveryId } : {}),
      };
      const deliver = () =>
        hop(request).catch((err: unknown) => {
          // The envelope refuses a missing package before any hop (a workflow failure, no ack).
          if (
            err instanceof WorkflowFailedError &&
            (err.cause as { type?: string } | undefined)?.type === 'InvalidStageHopRequest' &&
            JSON.stringify(built.pkg) === undefined
          ) {
            envelopeRefusals++;
            return undefined;
          }
          throw err;
        });
      const results =
        c.delivery === 'concurrent'
          ? await Promise.all([deliver(), deliver()])
          : c.delivery === 'twice'
            ? [await deliver(), await deliver()]
            : [await deliver()];
      const found: Finding[] = [];
      for (const res of results) {
        if (!res) continue;
        checkAcks({ acks: res.acks }, found);
        for (const ack of res.acks) acks[ack.ack] = (acks[ack.ack] ?? 0) + 1;
        if (res.package?.job_id) built.jobs.add(res.package.job_id);
      }
      for (const id of built.jobs) {
        const n = await checkJobWrites(world, id, found);
        if (built.forged && n > (before.get(id) ?? 0))
          found.push({ kind: 'false_accept', detail: `a forged ${c.target} delivery made job ${id} write` });
      }
      findings.push(...found.filter((f) => !known(f)).map((f) => ({ ...f, case: i })));
    }
    console.log(`fuzz-stage-hop seed ${SEED}: acks ${JSON.stringify(acks)}; envelope refusals ${envelopeRefusals}`);
    expect(findings, `seed ${SEED}: ${JSON.stringify(findings.slice(0, 3))}`).toEqual([]);
    for (const job of jobs) expect((await rail.store.listWrites(job.id)).length).toBeLessThanOrEqual(1);
  }, 90_000);
});
