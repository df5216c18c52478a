/**
 * A patch after 1.0 lives three steps (docs/replay.md, "Changing the rail after 1.0"): add it
 * behind patched(), deprecate it with deprecatePatch() once no run from before it is open, remove
 * the call once no run that took patched() is open. On a toy workflow, each build runs a job on the
 * suite's server, and each step's histories replay (or fail) on each build as the lifecycle says —
 * which is why a step waits for the runs of the one before to close.
 */
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import { DefaultLogger, NativeConnection, Worker, bundleWorkflowCode, type WorkflowBundle } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { quietReplayRuntime } from '../../src/replay';
import { uniqueId } from '../helpers/rail';

quietReplayRuntime();

const BUILDS = ['v1-before', 'v2-patched', 'v3-deprecated', 'v4-removed'] as const;
type Build = (typeof BUILDS)[number];

let connection: Connection;
let nativeConnection: NativeConnection;
const bundles = new Map<Build, WorkflowBundle>();
/** Each build's run: its history and what it returned. */
const runs = new Map<Build, { history: temporal.api.history.v1.IHistory; result: string }>();

async function runOn(build: Build): Promise<{ history: temporal.api.history.v1.IHistory; result: string }> {
  const taskQueue = uniqueId(`lifecycle-${build}`);
  const client = new Client({ connection, namespace: inject('namespace') });
  const worker = await Worker.create({
    connection: nativeConnection,
    namespace: inject('namespace'),
    taskQueue,
    workflowBundle: bundles.get(build)!,
  });
  const workflowId = uniqueId(build);
  const result = await worker.runUntil(
    client.workflow.execute<() => Promise<string>>('toyJob', { taskQueue, workflowId }),
  );
  return { history: await client.workflow.getHandle(workflowId).fetchHistory(), result };
}

/** Replays `histories` on `build`: the failures, each as `<history's build>: <error>`. */
async function replayOn(build: Build, histories: readonly Build[]): Promise<string[]> {
  const failures: string[] = [];
  for (const recorded of histories) {
    try {
      await Worker.runReplayHistory({ workflowBundle: bundles.get(build)! }, runs.get(recorded)!.history);
    } catch (err) {
      failures.push(`${recorded}: ${(err as Error).name}`);
    }
  }
  return failures;
}

beforeAll(async () => {
  const address = inject('temporalAddress');
  connection = await Connection.connect({ address });
  nativeConnection = await NativeConnection.connect({ address });
  for (const build of BUILDS) {
    bundles.set(
      build,
      await bundleWorkflowCode({
        workflowsPath: path.join(__dirname, 'fixtures', 'patch-lifecycle', `${build}.ts`),
        logger: new DefaultLogger('WARN'),
      }),
    );
    runs.set(build, await runOn(build));
  }
});
afterAll(async () => {
  await connection?.close();
  await nativeConnection?.close();
});

describe('a patch after 1.0: add → deprecate → remove', () => {
  it('each build runs its own path: the old one step before the patch, two steps from it on', () => {
    expect(BUILDS.map((b) => runs.get(b)!.result)).toEqual(['one step', 'two steps', 'two steps', 'two steps']);
  });

  it('add: the patched build replays runs from before the patch and its own', async () => {
    expect(await replayOn('v2-patched', ['v1-before', 'v2-patched'])).toEqual([]);
  });

  it('without the patch, the same change fails the runs from before it', async () => {
    expect(await replayOn('v4-removed', ['v1-before'])).toEqual(['v1-before: DeterminismViolationError']);
  });

  it('deprecate: the deprecated build replays runs that took patched() and its own, and no longer the ones from before the patch', async () => {
    expect(await replayOn('v3-deprecated', ['v2-patched', 'v3-deprecated'])).toEqual([]);
    expect(await replayOn('v3-deprecated', ['v1-before'])).toEqual(['v1-before: DeterminismViolationError']);
  });

  it('remove: the build without the call replays runs from the deprecated build and its own, and no longer runs that took patched()', async () => {
    expect(await replayOn('v4-removed', ['v3-deprecated', 'v4-removed'])).toEqual([]);
    expect(await replayOn('v4-removed', ['v2-patched'])).toEqual(['v2-patched: DeterminismViolationError']);
  });
});
