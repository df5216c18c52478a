/**
 * A fork names its parent, a hop and that hop's snapshot address, and carries the package. The
 * package matching its address proves only that the caller hashed it: a foreign client (here a
 * raw `workflow.start` of `handoffJob`, no `forkJob`) can hash any package under the parent's
 * name. The rail takes a fork only from a snapshot the parent's own rail recorded at that hop
 * (an ack of that hop names it); anything else is refused before the fork records anything.
 */
import { WorkflowFailedError } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { snapshotOf, type HandoffV1, type JobRequest, type JobResult } from '../../contracts';
import { startJob } from '../../src/operator/client';
import { hopSnapshots } from '../../src/operator/snapshot';
import { jobRequest, startRail, uniqueId, type Rail } from '../helpers/rail';

let rail: Rail;
/** The parent the forks name, and another job of the same pipeline (another ticket). */
let parent: JobResult;
let other: JobResult;
let parentRequest: JobRequest;
let otherRequest: JobRequest;

beforeAll(async () => {
  rail = await startRail();
  parentRequest = jobRequest();
  otherRequest = jobRequest({
    ticket: {
      ...jobRequest().ticket,
      body: 'I was charged twice for the same invoice this month. Can I get the duplicate payment refunded?',
    },
  });
  const run = async (r: JobRequest): Promise<JobResult> => (await startJob(rail.client, r, rail)).handle.result();
  [parent, other] = await Promise.all([run(parentRequest), run(otherRequest)]);
  expect([parent.status, other.status]).toEqual(['completed', 'completed']);
});
afterAll(async () => {
  await rail?.stop();
});

/** A job's package at `hop`, as its rail recorded it, with the address the ack names. */
async function snapshotAt(jobId: string, hop: number): Promise<{ uri: string; pkg: HandoffV1 }> {
  const [s] = await hopSnapshots(rail.client, rail.store, jobId, hop);
  return { uri: s!.snapshot, pkg: s!.package as HandoffV1 };
}

/** A fork request as a foreign client builds it: the parent's name, a hop, an address and a package. */
function forkRequest(of: string, hop: number, snapshot: string, pkg: HandoffV1, entry: unknown): JobRequest {
  return {
    job_id: uniqueId('fork'),
    entry,
    goal: pkg.goal,
    constraints: pkg.constraints,
    budget: { usd: pkg.budget.usd_remaining, revisions: pkg.budget.revisions_remaining },
    fork: { of, hop, snapshot, parent: pkg as unknown as Record<string, unknown> },
  } as JobRequest;
}

/** Starts the fork raw, on the rail's queue, and waits for it to end. */
async function runFork(request: JobRequest): Promise<JobResult> {
  const handle = await rail.client.workflow.start('handoffJob', {
    taskQueue: rail.taskQueue,
    workflowId: request.job_id,
    args: [request],
  });
  return (await handle.result()) as JobResult;
}

/** Nothing of the fork's in the store: no evidence re-recorded under its id, no write. */
async function expectNothingRecorded(forkId: string, pkg: HandoffV1): Promise<void> {
  for (const a of pkg.artifacts) expect(await rail.store.findRecordedArtifacts(forkId, a.uri)).toEqual([]);
  expect(await rail.store.listWrites(forkId)).toEqual([]);
}

const entryOf = (request: JobRequest) => (request as unknown as { ticket: unknown }).ticket;

describe("a fork's snapshot must be one its parent's rail recorded", () => {
  it("the parent's own package with an open question added, hashed under the parent's name: refused fork_snapshot_recorded, nothing recorded", async () => {
    const { pkg } = await snapshotAt(parent.job_id, 2);
    const forged: HandoffV1 = { ...pkg, open_questions: [...pkg.open_questions, 'May the refund skip review?'] };
    const address = snapshotOf(parent.job_id, forged).uri;
    const request = forkRequest(parent.job_id, 2, address, forged, entryOf(parentRequest));

    const result = await runFork(request);

    expect(result.status).toBe('rejected');
    expect(result.acks).toHaveLength(1);
    expect(result.acks[0]).toMatchObject({ ack: 'rejected_invariant', invariant: 'fork_snapshot_recorded', hop: 2 });
    expect(result.reason).toContain(address);
    await expectNothingRecorded(request.job_id, forged);
  });

  it("another job's snapshot relabelled as the parent's (its job id, its address): refused fork_snapshot_recorded, nothing recorded", async () => {
    const { pkg } = await snapshotAt(other.job_id, 2);
    const relabelled: HandoffV1 = { ...pkg, job_id: parent.job_id };
    const address = snapshotOf(parent.job_id, relabelled).uri;
    const request = forkRequest(parent.job_id, 2, address, relabelled, entryOf(otherRequest));

    const result = await runFork(request);

    expect(result.status).toBe('rejected');
    expect(result.acks.map((a) => [a.ack, a.invariant])).toEqual([['rejected_invariant', 'fork_snapshot_recorded']]);
    await expectNothingRecorded(request.job_id, relabelled);
  });

  it("another job's snapshot under its own address, naming the parent: refused as an invalid request, nothing runs", async () => {
    const { uri, pkg } = await snapshotAt(other.job_id, 2);
    const request = forkRequest(parent.job_id, 2, uri, pkg, entryOf(otherRequest));

    const error = await runFork(request).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(WorkflowFailedError);
    expect((error as WorkflowFailedError).cause).toMatchObject({ type: 'InvalidJobRequest' });
    await expectNothingRecorded(request.job_id, pkg);
  });

  it("the parent's real snapshot at that hop, sent the same raw way, is taken and the fork completes", async () => {
    const { uri, pkg } = await snapshotAt(parent.job_id, 3);
    const request = forkRequest(parent.job_id, 3, uri, pkg, entryOf(parentRequest));

    const result = await runFork(request);

    expect(result.status, result.reason).toBe('completed');
    expect(result.acks.map((a) => [a.stage, a.ack])).toEqual([
      ['judge', 'accepted'],
      ['writeback', 'accepted'],
    ]);
  });
});
