/**
 * A stage folds the package it emits behind the snapshot of its own delivery: the superseded
 * artifacts leave the package, and `jobArtifacts` (and `handrail show --hop`, `fork --from-hop`)
 * find them again in that snapshot, in the store. The snapshot is the stage's worker's to store,
 * and a foreign worker's word that it did is a claim like any other. Here the `draft` stage is
 * served by a worker that folds as the contract says but never stores its snapshot (its store
 * drops snapshot writes and answers as if it took them). The rail checks the store before it takes
 * a fold, and refuses the hop where it happens (`rejected_invariant` `fold_snapshot_stored`),
 * rather than letting a later stage's `jobArtifacts` fail on a package the rail accepted.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jobArtifacts } from '../../activities/artifacts';
import { ticketTriageActivities } from '../../activities/ticket-triage';
import type { StageActivity } from '../../activities/stage';
import { LIMITS, type AckRecord, type Artifact, type HandoffV1, type StageWork } from '../../contracts';
import { sha256Hex } from '../../contracts/sha256';
import { startJob, type JobHandle } from '../../src/operator/client';
import { forkJob } from '../../src/operator/fork';
import { hopSnapshots } from '../../src/operator/snapshot';
import { openStore, type Store } from '../../src/worker/store';
import { acksQuery, packageQuery, statusQuery } from '../../workflows/definitions';
import { jobRequest, startRail, type Rail } from '../helpers/rail';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** How the foreign drafter treats its snapshots: drops them and folds as if it stored them
 * (`forget`), drops them and does not fold (`neither`, a worker of another SDK that does neither),
 * or stores and folds as the production drafter does (`honest`). */
let mode: 'forget' | 'neither' | 'honest' = 'forget';
/** Snapshot bytes the foreign drafter was handed and did not keep, by address hash. */
const dropped = new Set<string>();

/** Is this canonical JSON a delivered package (what `storeSnapshot` writes)? */
function isSnapshotContent(text: string): boolean {
  try {
    const value = JSON.parse(text) as { schema?: unknown; hop?: unknown; ack?: unknown };
    return value.schema === 'handoff.v1' && value.hop !== undefined && value.ack !== undefined;
  } catch {
    return false;
  }
}

/** The store as the foreign worker uses it: a snapshot write is dropped, and answered with the
 * address it would have had (the worker believes it stored it, and folds behind it) or not. */
function forgetfulStore(store: Store): Store {
  return new Proxy(store, {
    get(target, prop, receiver) {
      if (prop === 'putContent')
        return async (text: string): Promise<string> => {
          if (mode === 'honest' || !isSnapshotContent(text)) return target.putContent(text);
          const hex = sha256Hex(text);
          dropped.add(hex);
          // Another hash than the address: `storeSnapshot` then finds nothing there, and does not fold.
          return mode === 'forget' ? hex : sha256Hex(`${text} `);
        };
      const value: unknown = Reflect.get(target, prop, receiver);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

let dir: string;
let store: Store;
let rail: Rail;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'handrail-fold-'));
  store = await openStore({ databaseUrl: process.env.DATABASE_URL, dataDir: dir });
  const foreignDraft = ticketTriageActivities({ store: forgetfulStore(store) }).draft as StageActivity;
  rail = await startRail({ store, activities: () => ({ draft: (work: StageWork) => foreignDraft(work) }) });
});
afterAll(async () => {
  await rail?.stop();
  await store?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** A ticket whose first offline draft the judge fails (off_topic): the revision supersedes it, and
 * the drafter folds the first draft off the package it emits. */
function revisingJob() {
  const request = jobRequest();
  return {
    ...request,
    ticket: {
      ...request.ticket,
      subject: 'API',
      body: 'Our nightly batch job hits 429 errors, should we add exponential backoff or ask for a higher quota?',
    },
  };
}

/** Waits until the job waits on a human or has ended, and returns its acks and package then. */
async function settled(handle: JobHandle): Promise<{ status: string; acks: AckRecord[]; pkg: HandoffV1 }> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const described = await handle.describe();
    if (described.status.name !== 'RUNNING') {
      const result = await handle.result();
      return { status: result.status, acks: result.acks, pkg: result.package };
    }
    const view = await handle.query(statusQuery);
    if (view.status === 'escalated')
      return { status: view.status, acks: await handle.query(acksQuery), pkg: await handle.query(packageQuery) };
    if (Date.now() > deadline) throw new Error(`job ${handle.workflowId} neither escalated nor ended`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('a foreign stage worker that folds without storing the snapshot', () => {
  it('its revision is refused at that hop (rejected_invariant fold_snapshot_stored, naming the snapshot); the job escalates on a package jobArtifacts reads, and show --hop answers from the job', async () => {
    mode = 'forget';
    const request = revisingJob();
    const { handle } = await startJob(rail.client, request, rail);
    const { status, acks, pkg } = await settled(handle);

    // Whatever the rail took, every artifact of the job stays readable.
    const artifacts = await jobArtifacts(store, pkg);
    expect(artifacts.filter((a) => a.type === 'summary_md')).toHaveLength(1);

    expect(status).toBe('escalated');
    const revision = acks.filter((a) => a.stage === 'draft' && a.hop === 4);
    expect(revision.map((a) => [a.ack, a.invariant])).toEqual([
      ['accepted', undefined],
      ['rejected_invariant', 'fold_snapshot_stored'],
    ]);
    const snapshot = revision[0]!.snapshot!;
    expect(dropped.has(snapshot.split('/').pop()!)).toBe(true);
    expect(revision[1]!.reason).toContain(snapshot);
    // The package goes on as delivered: no reference to the snapshot the store lacks.
    expect(pkg.earlier_artifacts).toBeUndefined();
    // The rail keeps what no worker stored, so the hop can still be shown (and forked from).
    const [shown] = await hopSnapshots(rail.client, store, request.job_id, 4);
    expect(shown).toMatchObject({ stage: 'draft', snapshot, source: 'job' });
    await handle.cancel();
  });

  it('the same job on the honest drafter (it stores, then folds) completes, and jobArtifacts finds both drafts', async () => {
    mode = 'honest';
    const request = revisingJob();
    const { handle } = await startJob(rail.client, request, rail);
    const result = await handle.result();

    expect(result.status, result.reason).toBe('completed');
    expect(result.package.earlier_artifacts).toBeDefined();
    const artifacts = await jobArtifacts(store, result.package);
    expect(artifacts.filter((a) => a.type === 'summary_md')).toHaveLength(2);
  });

  it("a worker that neither stores nor folds, on a package past the rail's fold threshold: the rail folds nothing behind the unstored snapshot, keeps it, and the job's artifacts stay readable", async () => {
    mode = 'honest';
    const parentRequest = jobRequest();
    const parent = await (await startJob(rail.client, parentRequest, rail)).handle.result();
    expect(parent.status, parent.reason).toBe('completed');
    // The parent's package at the draft's hop, with older intake notes put in before its own
    // intake (an operator's edit, inline): one more artifact and the rail folds between hops.
    const [at2] = await hopSnapshots(rail.client, store, parent.job_id, 2);
    const delivered = at2!.package as HandoffV1;
    const [entry, ...rest] = delivered.artifacts;
    const notes: Artifact[] = Array.from({ length: LIMITS.artifactsKept - delivered.artifacts.length + 1 }, (_, i) => ({
      type: 'intake.v1',
      uri: `data:application/json,${encodeURIComponent(JSON.stringify({ note: i }))}`,
    }));
    const edited: HandoffV1 = { ...delivered, artifacts: [entry!, ...notes, ...rest] };

    mode = 'neither';
    const { handle, request } = await forkJob(rail.client, store, parent.job_id, 2, { ...rail, package: edited });
    const { acks, pkg } = await settled(handle);

    const draft = acks.find((a) => a.stage === 'draft')!;
    expect(draft.ack).toBe('accepted');
    expect(dropped.has(draft.snapshot!.split('/').pop()!)).toBe(true);
    // Every artifact stays reachable, and nothing points at the snapshot the store lacks.
    const artifacts = await jobArtifacts(store, pkg);
    expect(artifacts.filter((a) => a.type === 'intake.v1')).toHaveLength(notes.length + 1);
    expect(pkg.earlier_artifacts?.snapshot).not.toBe(draft.snapshot);
    const [shown] = await hopSnapshots(rail.client, store, request.job_id, draft.hop);
    expect(shown).toMatchObject({ stage: 'draft', source: 'job' });
    await handle.cancel().catch(() => undefined);
  });
});
