/**
 * The rail's record of a fork's evidence, made once before the fork's first hop. A fork runs
 * under its own id, and a writer takes only evidence recorded for its own job: so every artifact
 * the fork starts with is recorded under the fork — what the parent's stages recorded for it,
 * re-recorded with the same artifact (address and hash) and stage, its package in the fork's
 * name (`forkedPackage`); an artifact the parent never recorded (an operator's edit) under
 * `FORK_EDIT_STAGE`, once its bytes are read and checked against its address and hash. Keys are
 * `fork:<fork>:<parent>:<artifact index>:<n>`, first one wins: a retried record changes nothing.
 *
 * Before anything is recorded, the fork's snapshot address is looked up among the parent's own
 * acks (its rail's records, read through the worker's Temporal client): workflow code checks that
 * the package is the snapshot its address names, but any caller can hash a package under the
 * parent's name, so only an address the parent's rail acked at that hop makes the package the
 * parent's.
 */
import { Context } from '@temporalio/activity';
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import {
  FORK_EDIT_STAGE,
  forkedPackage,
  type AckRecord,
  type Artifact,
  type HandoffV1,
  type JobResult,
  type StageResult,
} from '../contracts';
import { acksQuery } from '../workflows/definitions';
import { sha256Hex } from '../src/worker/store/content';
import type { Store } from '../src/worker/store';
import { readArtifactText } from './artifacts';
import { packageSha } from './stage';

export interface ForkEvidence {
  /** The parent job. */
  of: string;
  /** The package the fork starts from, in its own name. */
  package: HandoffV1;
  /** The snapshot address the fork names, and its hop: the parent's acks must name it there.
   * Absent only in what a rail built before this check scheduled (its jobs are not re-checked). */
  snapshot?: string;
  hop?: number;
}

/** The invariant a fork breaks whose snapshot address no ack of its parent's hop names. */
export const FORK_SNAPSHOT_RECORDED = 'fork_snapshot_recorded';

/** What the record gave the rail: the bodies of the newest artifact of each type (routing reads
 * them), or why the fork cannot start from it (nothing was recorded): the invariant it broke, when
 * not an edit's unreadable artifact (`fork_edit_readable`). */
export type ForkRecord =
  { bodies: Record<string, Record<string, unknown>> } | { refused: string; invariant?: typeof FORK_SNAPSHOT_RECORDED };

type Planned = { key: string; stage: string; result: StageResult };

export function forkActivities(store: Store) {
  return {
    async recordForkEvidence({ of, package: pkg, snapshot, hop }: ForkEvidence): Promise<ForkRecord> {
      if (snapshot !== undefined && hop !== undefined) {
        const unrecorded = await notRecordedBy(Context.current().client, of, hop, snapshot);
        if (unrecorded !== undefined) return { refused: unrecorded, invariant: FORK_SNAPSHOT_RECORDED };
      }
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

/** Why `snapshot` is not the parent's at `hop` (no such job, or no ack of that hop names it), or
 * undefined when one does. A finished parent is read from its result, any other asked for its acks
 * (a run continued as new answers with the acks it kept, as `handrail show --hop` reads them). */
async function notRecordedBy(client: Client, of: string, hop: number, snapshot: string): Promise<string | undefined> {
  const handle = client.workflow.getHandle(of);
  let acks: AckRecord[];
  try {
    const described = await handle.describe();
    acks =
      described.status.name === 'COMPLETED'
        ? ((await handle.result()) as JobResult).acks
        : await handle.query(acksQuery);
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return `no job ${of} to fork from`;
    throw err;
  }
  if (acks.some((a) => a.hop === hop && a.snapshot === snapshot)) return undefined;
  return `${snapshot} is not a snapshot job ${of}'s rail recorded at hop ${hop}: a fork starts only from a package the parent's acks name`;
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
