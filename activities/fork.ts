/**
 * The rail's record of a fork's evidence, made once before the fork's first hop. A fork runs
 * under its own id, and a writer takes only evidence recorded for its own job: so every artifact
 * the fork starts with is recorded under the fork — what the parent's stages recorded for it,
 * re-recorded with the same artifact (address and hash) and stage, its package in the fork's
 * name (`forkedPackage`); an artifact the parent never recorded (an operator's edit) under
 * `FORK_EDIT_STAGE`, once its bytes are read and checked against its address and hash. Keys are
 * `fork:<fork>:<parent>:<artifact index>:<n>`, first one wins: a retried record changes nothing.
 */
import { FORK_EDIT_STAGE, forkedPackage, type Artifact, type HandoffV1, type StageResult } from '../contracts';
import { sha256Hex } from '../src/worker/store/content';
import type { Store } from '../src/worker/store';
import { readArtifactText } from './artifacts';
import { packageSha } from './stage';

export interface ForkEvidence {
  /** The parent job. */
  of: string;
  /** The package the fork starts from, in its own name. */
  package: HandoffV1;
}

/** What the record gave the rail: the bodies of the newest artifact of each type (routing reads
 * them), or why an edit's artifact cannot be evidence (nothing was recorded). */
export type ForkRecord = { bodies: Record<string, Record<string, unknown>> } | { refused: string };

type Planned = { key: string; stage: string; result: StageResult };

export function forkActivities(store: Store) {
  return {
    async recordForkEvidence({ of, package: pkg }: ForkEvidence): Promise<ForkRecord> {
      const planned: Planned[] = [];
      const identity = { job_id: pkg.job_id, traceparent: pkg.trace.traceparent };
      for (const [n, artifact] of pkg.artifacts.entries()) {
        if (n === 0) continue;
        const prefix = `fork:${pkg.job_id}:${of}:${n}`;
        const recorded = (await store.findRecordedArtifacts(of, artifact.uri)).filter(
          (r) => r.result.artifact.type === artifact.type,
        );
        if (recorded.length === 0) {
          const edit = await editResult(store, pkg, artifact);
          if ('refused' in edit) return edit;
          planned.push({ key: `${prefix}:0`, stage: FORK_EDIT_STAGE, result: edit.result });
        }
        for (const [i, r] of recorded.entries()) {
          const { recorded_by_other: _other, ...result } = r.result;
          planned.push({
            key: `${prefix}:${i}`,
            stage: r.stage,
            result: { ...result, package: forkedPackage(result.package, identity) },
          });
        }
      }
      const bodies: Record<string, Record<string, unknown>> = {};
      for (const { key, stage, result } of planned) {
        await store.recordStageCompletion(key, result, {
          job_id: pkg.job_id,
          stage,
          delivery_sha: sha256Hex(key),
          package_sha: packageSha(result.package),
        });
        if (result.body && typeof result.body === 'object')
          bodies[result.artifact.type] = result.body as Record<string, unknown>;
      }
      return { bodies };
    },
  };
}

/** An operator's artifact as the fork's evidence: its bytes read and checked (address, hash), a
 * JSON body; else the reason it cannot be. */
async function editResult(
  store: Store,
  pkg: HandoffV1,
  artifact: Artifact,
): Promise<{ result: StageResult } | { refused: string }> {
  let text: string;
  try {
    ({ text } = await readArtifactText(store, artifact));
  } catch (err) {
    return { refused: `the edit's ${artifact.type}: ${err instanceof Error ? err.message : String(err)}` };
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return { refused: `the edit's ${artifact.type} is not a JSON body` };
  }
  return { result: { package: pkg, artifact, cost_usd: 0, body } };
}
