/**
 * The I/O side of `handrail replay --diff`: the stages' current code run on a recorded job's
 * deliveries, in a throwaway in-memory store that holds only what the recording made. Nothing
 * reaches the worker's store or CRM: writers write to the throwaway store.
 */
import path from 'node:path';
import type { ActivityDeps } from '../../activities/deps';
import { packageSha, type StageActivity } from '../../activities/stage';
import { ApplicationFailure } from '@temporalio/common';
import { canonicalJson, MERGE_STAGE, snapshotContent, type Pipeline } from '../../contracts';
import { withTranscript } from '../../activities/transcript-log';
import { openStore, type Store } from '../worker/store';
import { parseArtifactUri, sha256Hex } from '../worker/store/content';
import { transcriptOf, type RecordedStep, type StageRun, type StageRunner } from './diff';

/** The pipelines a diff runs on and their stage activities: what a worker gets in
 * `createHandrailWorkers({ pipelines, activities })`. */
export interface DiffPipelines {
  pipelines: readonly Pipeline[];
  activities: (deps: ActivityDeps) => object;
  /** Stages whose recorded outputs stand (they call a model): not run again, nothing compared. */
  asRecorded?: readonly string[];
}

export class DiffModuleError extends Error {
  override readonly name = 'DiffModuleError';
}

/** A module exporting `pipelines` and `activities` (and optionally `asRecorded`), as `--pipelines` names it. */
export async function loadDiffPipelines(modulePath: string): Promise<DiffPipelines> {
  let loaded: Partial<DiffPipelines>;
  try {
    loaded = (await import(path.resolve(modulePath))) as Partial<DiffPipelines>;
  } catch (err) {
    throw new DiffModuleError(`--pipelines ${modulePath}: ${(err as Error).message}`);
  }
  if (!Array.isArray(loaded.pipelines) || typeof loaded.activities !== 'function') {
    throw new DiffModuleError(
      `--pipelines ${modulePath} must export \`pipelines\` (an array of pipelines) and \`activities\` (deps => the stage activities)`,
    );
  }
  return {
    pipelines: loaded.pipelines,
    activities: loaded.activities,
    ...(Array.isArray(loaded.asRecorded) ? { asRecorded: loaded.asRecorded } : {}),
  };
}

/** Where a recorded result is kept for provenance, apart from the key the stage records under now. */
const recordedKey = (key: string) => `replay-diff:recorded:${key}`;

/**
 * What the recording made, put in the throwaway store so a later stage finds it: the artifact's
 * body under its content address (when its canonical JSON hashes to that address) and the result
 * as a record of the job (a writer's provenance reads those).
 */
async function seed(store: Store, step: RecordedStep): Promise<void> {
  const result = step.result;
  if (!result) return;
  const body = canonicalJson(result.body);
  if (result.body !== undefined && parseArtifactUri(result.artifact.uri) === sha256Hex(body))
    await store.putContent(body);
  const key = step.kind === 'merge' ? step.work.key : step.work.delivery_key;
  const stage = step.kind === 'merge' ? MERGE_STAGE : (result.package.ack?.stage ?? step.work.stage);
  await store.recordStageCompletion(recordedKey(key), result, {
    job_id: result.package.job_id,
    stage,
    delivery_sha: 'recorded',
    package_sha: packageSha(result.package),
  });
}

/**
 * A runner for one job: a fresh in-memory store (a stage loads what it searches), and the stages'
 * current code over it (no model: a stage that needs one belongs in `asRecorded`). Each delivery
 * is the recorded one, its snapshot stored as recorded, with one exception for what the store
 * holds: the job's log is the one the stages wrote here (a changed stage writes another).
 */
export async function openStageRunner(set: DiffPipelines): Promise<{ run: StageRunner; close(): Promise<void> }> {
  const store = await openStore({ sqlitePath: ':memory:' });
  const activities = set.activities({ store }) as Record<string, StageActivity>;
  const seeded = new Set<RecordedStep>();
  let log: string | undefined;
  const run: StageRunner = async (step, earlier) => {
    for (const s of earlier) if (!seeded.has(s)) await seed(store, s).then(() => seeded.add(s));
    const activity = activities[step.work.stage];
    if (!activity) return { failure: `no activity for stage "${step.work.stage}"` };
    const pkg = step.work.package;
    const recordedLog = transcriptOf(pkg.memory_refs);
    // The snapshot as recorded, under its address: a stage folds behind it as it did when recorded.
    if (pkg.context_ref !== undefined) await store.putContent(snapshotContent(pkg));
    const delivered =
      log && recordedLog && log !== recordedLog ? { ...pkg, memory_refs: withTranscript(pkg.memory_refs, log) } : pkg;
    let answer: StageRun;
    try {
      answer = { result: await activity({ ...step.work, package: delivered }) };
      log = transcriptOf(answer.result.package.memory_refs) ?? log;
    } catch (err) {
      answer = { failure: err instanceof ApplicationFailure ? `${err.type ?? 'Error'}: ${err.message}` : String(err) };
    }
    return answer;
  };
  return { run, close: () => store.close() };
}
