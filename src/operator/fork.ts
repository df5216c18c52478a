/**
 * `forkJob`: a new job started from the package a job's rail recorded at one of its hops (its
 * snapshot, `handrail show <job> --hop N`), optionally replaced by an edit, on the wallet the
 * parent had there, linked to its parent (the `HandrailForkOf` search attribute and the memo).
 * The rail checks the fork like any start, refuses an edit that would reuse the parent's verdict
 * on changed content, and re-records the parent's evidence under the fork before its first hop.
 */
import type { Client } from '@temporalio/client';
import { inlineText, parseEntryUri, type HandoffV1, type JobRequest } from '../../contracts';
import { HandrailPipeline } from '../../workflows/search-attributes';
import type { Store } from '../worker/store';
import { startJob, type StartOptions, type StartedJob } from './client';
import { hopSnapshots } from './snapshot';

/** The parent's hop cannot be forked from (several snapshots, none kept, no package). */
export class ForkRefusedError extends Error {
  override readonly name = 'ForkRefusedError';
}

export interface ForkOptions extends Partial<StartOptions> {
  /** The fork's job id; a fresh one named after the parent by default. */
  jobId?: string;
  /** An edited package to start from instead of the snapshot (the rail validates and acks it). */
  package?: unknown;
  /** The pipeline the fork runs; the parent's by default. */
  pipeline?: string;
}

export interface StartedFork extends StartedJob {
  request: JobRequest;
}

/** Starts a fork of `parentId` from its hop `hop`. JobNotFoundError for an unknown parent,
 * HopNotFoundError for a hop without a snapshot, ForkRefusedError for one that cannot be forked;
 * none of them starts anything. */
export async function forkJob(
  client: Client,
  store: Store,
  parentId: string,
  hop: number,
  options: ForkOptions = {},
): Promise<StartedFork> {
  const snapshots = await hopSnapshots(client, store, parentId, hop);
  if (snapshots.length > 1)
    throw new ForkRefusedError(
      `job ${parentId}'s hop ${hop} has ${snapshots.length} snapshots (a fan-out's branches: ${snapshots.map((s) => s.stage).join(', ')}); fork from the hop before or after it`,
    );
  const [snapshot] = snapshots;
  if (!snapshot || snapshot.source === 'missing')
    throw new ForkRefusedError(`job ${parentId}'s snapshot at hop ${hop} is no longer kept anywhere`);
  const parent = snapshot.package as HandoffV1;
  if (!isPackage(parent))
    throw new ForkRefusedError(`job ${parentId}'s hop ${hop} was refused before a package arrived; nothing to fork`);
  const request: JobRequest = {
    job_id: options.jobId ?? forkId(parentId, hop),
    ...(await pipelineOf(client, parentId, options.pipeline)),
    entry: await entryBody(store, parent),
    goal: parent.goal,
    constraints: parent.constraints,
    budget: { usd: parent.budget.usd_remaining, revisions: parent.budget.revisions_remaining },
    fork: {
      of: parentId,
      hop,
      snapshot: snapshot.snapshot,
      parent: parent as unknown as Record<string, unknown>,
      ...(options.package === undefined ? {} : { package: options.package as Record<string, unknown> }),
    },
  };
  return { ...(await startJob(client, request, options)), request };
}

/** A fresh fork id: the parent's (shortened), the hop, and the time. */
export function forkId(parentId: string, hop: number, now: Date = new Date()): string {
  return `${parentId.slice(0, 80)}-fork${hop}-${now.getTime().toString(36)}`;
}

function isPackage(value: unknown): value is HandoffV1 {
  const pkg = value as Partial<HandoffV1> | null;
  return pkg !== null && typeof pkg === 'object' && Array.isArray(pkg.artifacts) && pkg.budget !== undefined;
}

/** The pipeline the fork names: the one asked for, else the parent's (as it published it). */
async function pipelineOf(client: Client, parentId: string, asked?: string): Promise<{ pipeline?: string }> {
  if (asked !== undefined) return { pipeline: asked };
  const described = await client.workflow.getHandle(parentId).describe();
  const pipeline = described.typedSearchAttributes.get(HandrailPipeline);
  return pipeline ? { pipeline } : {};
}

/** The parent's entry body, as its request carried it: inline on the package, or in the store. */
async function entryBody(store: Store, parent: HandoffV1): Promise<unknown> {
  const entry = parent.artifacts[0];
  const inline = inlineText(entry);
  const stored = entry ? parseEntryUri(entry.uri) : undefined;
  const text = inline ?? (stored ? await store.getContent(stored.sha) : null);
  if (text === null || text === undefined)
    throw new ForkRefusedError(`job ${parent.job_id}'s entry ${entry?.uri.slice(0, 120) ?? ''} is not in the store`);
  return JSON.parse(text) as unknown;
}
