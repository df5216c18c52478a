/**
 * One workflow change rolled out two ways on a cluster (bench/rollout.ts), with real handrail jobs
 * over the cluster's PostgreSQL store. v2 puts a `rerank` stage between retrieve and draft.
 *
 * - `patching`: unversioned workers; v2 asks patched() at the route; v2 starts and v1 is stopped
 *   at once (a rolling replace).
 * - `pinned`: Worker Deployment Versioning, every job PINNED; v2 has no patch; v2 starts and
 *   becomes the current version; v1 keeps polling until its last job ends.
 * - `pinned, v1 retired at once`: the same, but v1 is stopped as soon as v2 is current, as
 *   patching's rolling replace would: what the jobs pinned to v1 do then.
 * - `auto-upgrade`: the same deployment, every job AUTO_UPGRADE, v2 unpatched: what a job in
 *   flight meets when it moves to v2 without a patch.
 *
 * Each route runs the same jobs: two wait for a human at the hop cap when v2 arrives (one of them
 * continues as new after every hop), one starts just before v2 arrives, and one after the switch.
 */
import path from 'node:path';
import {
  Client,
  Connection,
  type WorkflowHandle,
  type WorkflowHandleWithFirstExecutionRunId,
} from '@temporalio/client';
import type { VersioningBehavior } from '@temporalio/common';
import { NativeConnection, type Worker } from '@temporalio/worker';
import type { JobRequest, JobResult, Pipeline } from '../contracts';
import type { ActivityDeps } from '../activities/deps';
import type { StageActivity } from '../activities/stage';
import { handrailDataConverter } from '../src/codec';
import { codeRoot } from '../src/config';
import { sampleJobRequest } from '../src/devtools/samples/tickets';
import { decide, startJob } from '../src/operator/client';
import { HandrailPlugin } from '../src/plugin';
import { bundleWorkflows } from '../src/replay';
import type { Store } from '../src/worker/store';
import { createHandrailWorkers, runWorkers } from '../src/worker/worker';
import { statusQuery } from '../workflows/definitions';
import { rolloutV1Activities, rolloutV2Activities } from '../test/integration/fixtures/rollout/activities';
import {
  ROLLOUT_PIPELINE,
  rolloutV1,
  rolloutV2,
  rolloutV2Unpatched,
} from '../test/integration/fixtures/rollout/pipelines';
import { jobRuns, type RunFacts } from './rollout-history';

export type RouteName = 'patching' | 'pinned' | 'pinned, v1 retired at once' | 'auto-upgrade';
export type JobKind = 'waiting' | 'waiting, continues as new' | 'started just before v2' | 'after the switch';

export interface RolloutEnv {
  address: string;
  namespace: string;
  client: Client;
  store: Store;
  /** Before the switch, how long the humans take to answer (ms). */
  humanDelayMs: number;
  /** How long a job may take to end after its decision before it counts as stuck (ms). */
  settleMs: number;
  log: (msg: string) => void;
}

export interface JobOutcome {
  kind: JobKind;
  status: string;
  /** Whether it took the new path (a `rerank` hop). */
  reranked: boolean;
  runs: number;
  /** Builds of its workflow tasks, per run, e.g. `v1×2 → v1` (→ between runs). */
  builds: string;
  events: number;
  nondeterminism: number;
  patchMarkers: number;
  targetChanged: number;
}

export interface RouteOutcome {
  route: RouteName;
  jobs: JobOutcome[];
  /** From v2's start to the last workflow task v1 completed: how long v1 had to keep polling. */
  v1NeededMs: number;
  /** How long stopping v1 took (its drain). */
  v1StopMs: number;
}

const FIXTURES = path.join(codeRoot, 'test', 'integration', 'fixtures', 'rollout');

interface Build {
  id: 'v1' | 'v2';
  bundle: { code: string };
  pipeline: Pipeline;
  activities: (deps: ActivityDeps) => Record<string, StageActivity>;
}

export async function bundleBuilds(): Promise<Record<'v1' | 'v2' | 'v2Unpatched', Build>> {
  const [v1, v2, v2u] = await Promise.all(
    ['build-v1.ts', 'build-v2.ts', 'build-v2-unpatched.ts'].map((f) => bundleWorkflows(path.join(FIXTURES, f))),
  );
  return {
    v1: { id: 'v1', bundle: v1!, pipeline: rolloutV1, activities: rolloutV1Activities },
    v2: { id: 'v2', bundle: v2!, pipeline: rolloutV2, activities: rolloutV2Activities },
    v2Unpatched: { id: 'v2', bundle: v2u!, pipeline: rolloutV2Unpatched, activities: rolloutV2Activities },
  };
}

interface Running {
  stop(): Promise<void>;
}

/** One build's workers (role `all`) on the route's task queue, as a deployment version when `behavior` is set. */
async function startBuild(
  env: RolloutEnv,
  build: Build,
  taskQueue: string,
  behavior: VersioningBehavior | undefined,
): Promise<Running> {
  const connection = await NativeConnection.connect({ address: env.address });
  const plugin = new HandrailPlugin({
    pipelines: [build.pipeline],
    activities: build.activities,
    dataConverter: handrailDataConverter(),
  });
  // Unversioned workers still name their build, so each workflow task says which build ran it.
  const version = { deploymentName: taskQueue, buildId: build.id };
  const workers: Worker[] = await createHandrailWorkers({
    connection,
    plugin,
    config: { namespace: env.namespace, taskQueue },
    store: env.store,
    workflowBundle: build.bundle,
    deployment: behavior
      ? { version, useWorkerVersioning: true, defaultVersioningBehavior: behavior }
      : { version, useWorkerVersioning: false },
  });
  const running = runWorkers(workers);
  return {
    async stop() {
      for (const w of workers) w.shutdown();
      await running;
      await connection.close();
    },
  };
}

/** Makes `buildId` the deployment's current version, once its workers have polled (the server
 * knows a version only from its pollers). */
export async function setCurrentVersion(client: Client, deploymentName: string, buildId: string): Promise<void> {
  for (let tries = 0; ; tries++) {
    try {
      await client.workflowService.setWorkerDeploymentCurrentVersion({
        namespace: client.options.namespace,
        deploymentName,
        buildId,
        identity: 'rollout-bench',
      });
      return;
    } catch (err) {
      if (tries > 60) throw err;
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

const approve = { action: 'approve', actor: 'ops.lead', note: 'fine to write' } as const;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function request(id: string, kind: JobKind): JobRequest {
  const sample = sampleJobRequest(id);
  // A body whose first draft passes: the path is the route's, with no revision.
  const body = 'I upgraded to the annual plan yesterday and my card was charged twice. How do refunds work?';
  return {
    ...sample,
    ticket: { ...sample.ticket, id: `tkt_${id}`, body },
    budget: { usd: 1, revisions: 2 },
    pipeline: ROLLOUT_PIPELINE,
    // The cap stops the job before writeback: it waits for a human, past the changed route.
    ...(kind.startsWith('waiting') ? { max_hops: 3 } : {}),
    ...(kind === 'waiting, continues as new' ? { continue_after: { events: 1 } } : {}),
  } as JobRequest;
}

async function waitEscalated(handle: WorkflowHandle, deadline: number): Promise<void> {
  while ((await handle.query(statusQuery).catch(() => undefined))?.status !== 'escalated') {
    if (Date.now() > deadline) throw new Error(`${handle.workflowId} never escalated`);
    await sleep(250);
  }
}

interface Started {
  kind: JobKind;
  id: string;
  firstRunId: string;
  result: Promise<JobResult | undefined>;
}

export async function runRoute(
  env: RolloutEnv,
  route: RouteName,
  builds: Awaited<ReturnType<typeof bundleBuilds>>,
): Promise<RouteOutcome> {
  const taskQueue = `rollout-${route.replace(/[^a-z0-9]+/g, '-')}-${Date.now().toString(36)}`;
  const behavior: VersioningBehavior | undefined =
    route === 'patching' ? undefined : route === 'auto-upgrade' ? 'AUTO_UPGRADE' : 'PINNED';
  const v2Build = route === 'patching' ? builds.v2 : builds.v2Unpatched;
  const begin = async (kind: JobKind): Promise<Started> => {
    const id = `${taskQueue}-${kind.replace(/[^a-z0-9]+/g, '-')}`;
    const { handle } = await startJob(env.client, request(id, kind), { taskQueue, pipelines: [rolloutV1] });
    const result = handle.result().catch(() => undefined);
    // startJob created it (fresh id): the handle is the start's, which knows the first run.
    const firstRunId = (handle as WorkflowHandleWithFirstExecutionRunId).firstExecutionRunId;
    return { kind, id, firstRunId, result };
  };

  let v1: Running | undefined = await startBuild(env, builds.v1, taskQueue, behavior);
  let v2: Running | undefined;
  const jobs: Started[] = [];
  try {
    if (behavior) await setCurrentVersion(env.client, taskQueue, 'v1');
    const waiting = await Promise.all([begin('waiting'), begin('waiting, continues as new')]);
    jobs.push(...waiting);
    await Promise.all(
      waiting.map((j) => waitEscalated(env.client.workflow.getHandle(j.id), Date.now() + env.settleMs)),
    );
    jobs.push(await begin('started just before v2'));
    env.log(`${route}: ${jobs.length} jobs on v1; v2 arrives`);

    const switchedAt = Date.now();
    v2 = await startBuild(env, v2Build, taskQueue, behavior);
    let v1StopMs = 0;
    if (behavior) await setCurrentVersion(env.client, taskQueue, 'v2');
    if (!behavior || route === 'pinned, v1 retired at once') {
      // The rolling replace: v1 drains and stops as soon as v2 polls.
      const stopping = Date.now();
      await v1.stop();
      v1 = undefined;
      v1StopMs = Date.now() - stopping;
    }
    jobs.push(await begin('after the switch'));
    await sleep(env.humanDelayMs);
    // A decision waits for a workflow task; one that a build keeps failing never comes back.
    const decisions = jobs
      .filter((j) => j.kind.startsWith('waiting'))
      .map((j) =>
        decide(env.client, j.id, approve).catch((err: unknown) => env.log(`${route}: decide ${j.id}: ${err}`)),
      );
    await Promise.race([Promise.all([...decisions, ...jobs.map((j) => j.result)]), sleep(env.settleMs)]);
    if (v1) {
      const stopping = Date.now();
      await v1.stop();
      v1 = undefined;
      v1StopMs = Date.now() - stopping;
    }
    const outcomes = await Promise.all(jobs.map((j) => outcome(env, j)));
    const v1Tasks = outcomes.flatMap((o) => o.lastV1TaskAt);
    return {
      route,
      jobs: outcomes.map((o) => o.job),
      v1NeededMs: Math.max(0, ...v1Tasks.map((at) => at - switchedAt)),
      v1StopMs,
    };
  } finally {
    // A job a build could not finish (a non-determinism failure retried forever) ends here.
    for (const j of jobs)
      await env.client.workflow
        .getHandle(j.id)
        .terminate('rollout bench: end of route')
        .catch(() => undefined);
    await v1?.stop();
    await v2?.stop();
  }
}

async function outcome(env: RolloutEnv, j: Started): Promise<{ job: JobOutcome; lastV1TaskAt: number[] }> {
  const settled = await Promise.race([j.result, sleep(0).then(() => undefined)]);
  const runs: RunFacts[] = await jobRuns(env.client, j.id, j.firstRunId);
  const sum = (f: (r: RunFacts) => number) => runs.reduce((n, r) => n + f(r), 0);
  const status = settled?.status ?? 'stuck (terminated)';
  return {
    job: {
      kind: j.kind,
      status,
      reranked: runs.some((r) => r.activities.includes('rerank')),
      runs: runs.length,
      builds: runs.map((r) => collapse(r.tasks.map((t) => t.build))).join(' → '),
      events: sum((r) => r.events),
      nondeterminism: sum((r) => r.nondeterminism),
      patchMarkers: sum((r) => r.patchMarkers),
      targetChanged: sum((r) => r.targetChanged),
    },
    lastV1TaskAt: runs.flatMap((r) => r.tasks.filter((t) => t.build === 'v1').map((t) => t.at)),
  };
}

/** `v1 v1 v2 v2 v2` → `v1×2 v2×3`. */
function collapse(builds: string[]): string {
  const parts: string[] = [];
  for (let i = 0; i < builds.length;) {
    let n = 1;
    while (builds[i + n] === builds[i]) n++;
    parts.push(n === 1 ? builds[i]! : `${builds[i]}×${n}`);
    i += n;
  }
  return parts.join(' ');
}

export async function connectClient(address: string, namespace: string): Promise<Client> {
  return new Client({
    connection: await Connection.connect({ address }),
    namespace,
    dataConverter: handrailDataConverter(),
  });
}
