/**
 * `forkJob` / `handrail fork` on the real dev server: a fork starts from the package the parent's
 * rail recorded at a hop (or an edit of it), writes only on evidence recorded for the fork, and
 * never with the parent's verdict on content that verdict did not judge.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { WorkflowNotFoundError } from '@temporalio/common';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Artifact, HandoffV1, JobResult } from '../../contracts';
import { readArtifactText } from '../../activities/artifacts';
import { JobNotFoundError, startJob } from '../../src/operator/client';
import { forkJob } from '../../src/operator/fork';
import { HopNotFoundError, hopSnapshots } from '../../src/operator/snapshot';
import { openStore, type Store } from '../../src/worker/store';
import { HandrailForkOf } from '../../workflows/search-attributes';
import { runHandrail } from '../helpers/cli';
import { jobRequest, startRail, uniqueId, type Rail } from '../helpers/rail';

let rail: Rail;
let store: Store;
let dir: string;
let parent: JobResult;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'handrail-fork-'));
  store = await openStore({ databaseUrl: process.env.DATABASE_URL, dataDir: path.join(dir, 'data') });
  rail = await startRail({ store });
  const { handle } = await startJob(rail.client, jobRequest(), rail);
  parent = await handle.result();
  expect(parent.status).toBe('completed');
});
afterAll(async () => {
  await rail?.stop();
  await store?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** The parent's package as its rail recorded it at `hop`. */
async function parentAt(hop: number): Promise<HandoffV1> {
  const [snapshot] = await hopSnapshots(rail.client, store, parent.job_id, hop);
  return snapshot!.package as HandoffV1;
}

/** The parent's draft, its markdown changed: an operator's edit, inline. */
async function editedDraft(): Promise<Artifact> {
  const draft = (await parentAt(3)).artifacts.find((a) => a.type === 'summary_md')!;
  const body = JSON.parse((await readArtifactText(store, draft)).text) as { markdown: string };
  const edited = { ...body, markdown: `${body.markdown}\n\nThank you for your patience.` };
  return { type: 'summary_md', uri: `data:application/json,${encodeURIComponent(JSON.stringify(edited))}` };
}

const writeKey = (jobId: string) => `${jobId}:writeback:receipt.v1`;

describe('fork from a hop', () => {
  it('a fork from hop 2 with an edited draft runs the judge again and writes once under its own id', async () => {
    const at2 = await parentAt(2);
    expect(at2.hop?.to).toBe('draft');
    const edited = { ...at2, artifacts: [...at2.artifacts, await editedDraft()] };

    const { handle, request } = await forkJob(rail.client, store, parent.job_id, 2, { ...rail, package: edited });
    const result = await handle.result();

    expect(result.status, result.reason).toBe('completed');
    expect(result.acks.map((a) => [a.stage, a.ack])).toEqual([
      ['judge', 'accepted'],
      ['writeback', 'accepted'],
    ]);
    expect(result.acks[0]!.actor).toBe('operator');
    expect(result.package.evaluator.last_verdict).toBe('pass');
    const writes = await store.listWrites(request.job_id);
    expect(writes.map((w) => w.write_key)).toEqual([writeKey(request.job_id)]);
    expect(await store.findWrite(writeKey(request.job_id))).not.toBeNull();
    // The parent's own write stays the parent's.
    expect((await store.listWrites(parent.job_id)).map((w) => w.write_key)).toEqual([writeKey(parent.job_id)]);

    // Linked to its parent where the Web UI shows it.
    const described = await handle.describe();
    expect(described.typedSearchAttributes.get(HandrailForkOf)).toBe(parent.job_id);
    expect(described.memo).toMatchObject({ handrail_fork: { of: parent.job_id, hop: 2, edited: true } });
  });

  it("a fork whose edit keeps the parent's pass on a changed draft is refused rejected_invariant, and nothing is written", async () => {
    const at4 = await parentAt(4);
    expect(at4.evaluator.last_verdict).toBe('pass');
    const draft = await editedDraft();
    const edited = { ...at4, artifacts: at4.artifacts.map((a) => (a.type === 'summary_md' ? draft : a)) };

    const { handle, request } = await forkJob(rail.client, store, parent.job_id, 4, { ...rail, package: edited });
    const result = await handle.result();

    expect(result.status).toBe('rejected');
    expect(result.acks).toHaveLength(1);
    expect(result.acks[0]).toMatchObject({ ack: 'rejected_invariant', invariant: 'fork_edit_rejudged', hop: 4 });
    expect(await store.listWrites(request.job_id)).toEqual([]);
  });

  it("a fork with no edits from the writer's hop completes on the parent's evidence, re-recorded under the fork", async () => {
    const at4 = await parentAt(4);
    const { handle, request } = await forkJob(rail.client, store, parent.job_id, 4, rail);
    const result = await handle.result();

    expect(result.status, result.reason).toBe('completed');
    expect(result.acks.map((a) => [a.stage, a.ack])).toEqual([['writeback', 'accepted']]);
    // The wallet the parent had at that hop.
    expect(request.budget).toEqual({ usd: at4.budget.usd_remaining, revisions: at4.budget.revisions_remaining });
    expect((await store.listWrites(request.job_id)).map((w) => w.write_key)).toEqual([writeKey(request.job_id)]);
    // Every artifact the writer took is recorded for the fork, with the parent's address.
    const verdict = result.package.artifacts.find((a) => a.type === 'verdict.v1')!;
    expect((await store.findRecordedArtifacts(request.job_id, verdict.uri)).map((r) => r.stage)).toEqual(['judge']);
  });

  it('a fork of an unknown job, or from a hop the job does not have, is a typed error and starts nothing', async () => {
    const jobId = uniqueId('fork');
    await expect(forkJob(rail.client, store, uniqueId('nobody'), 1, { ...rail, jobId })).rejects.toBeInstanceOf(
      JobNotFoundError,
    );
    await expect(forkJob(rail.client, store, parent.job_id, 99, { ...rail, jobId })).rejects.toBeInstanceOf(
      HopNotFoundError,
    );
    await expect(rail.client.workflow.getHandle(jobId).describe()).rejects.toBeInstanceOf(WorkflowNotFoundError);

    const env = {
      TEMPORAL_ADDRESS: inject('temporalAddress'),
      HANDRAIL_TASK_QUEUE: rail.taskQueue,
      HANDRAIL_DATA_DIR: path.join(dir, 'data'),
    };
    const unknown = await runHandrail(['fork', uniqueId('nobody'), '--from-hop', '1', '--job-id', jobId], env);
    expect(unknown.code).toBe(3);
    expect(unknown.stderr).toMatch(/no job/);
    const outOfRange = await runHandrail(['fork', parent.job_id, '--from-hop', '99', '--job-id', jobId], env);
    expect(outOfRange.code).toBe(2);
    expect(outOfRange.stderr).toMatch(/has no snapshot at hop 99; hops with one: 0, 1, 2, 3, 4/);
    await expect(rail.client.workflow.getHandle(jobId).describe()).rejects.toBeInstanceOf(WorkflowNotFoundError);
  });
});
