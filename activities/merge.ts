/**
 * The rail's merge step of a fan-out, as an activity because it writes: the merged artifact (the
 * branches' artifacts by reference, content-addressed) and one record under
 * `job_id:merge:<artifact_type>`, first one wins. A retried merge, or a merge run twice, answers
 * with the recorded artifact, so a job has one merge record whatever crashed in between. The
 * merged package's summary is the hub's plus each branch's segment, in the fan-out's order.
 */
import { MERGE_STAGE, MergedBranches, type HandoffV1, type StageResult } from '../contracts';
import type { Store } from '../src/worker/store';
import { writeArtifact } from './artifacts';
import { asAnswered, deliveryFacts } from './stage';
import { appendSegments } from './summary';
import { joinBranchTurns, withTranscript } from './transcript-log';

export interface MergeWork {
  /** `job_id:merge:<artifact_type>`. */
  key: string;
  /** The merged artifact's type (the fan-out's `merge`). */
  type: string;
  body: MergedBranches;
  /** The package the rail built for the next stage, less the merged artifact (the hub's summary). */
  package: HandoffV1;
  /** The branches' summary segments in the fan-out's order, appended to the hub's summary (the
   * oldest moved to the store once it is full). Absent: the summary stays the hub's. */
  segments?: string[];
  /** Each branch's memory refs in the fan-out's order: their turns join the job's one log. */
  branches?: Pick<HandoffV1, 'memory_refs'>[];
}

export function mergeActivities(store: Store) {
  return {
    async mergeBranches(work: MergeWork): Promise<StageResult> {
      const artifact = await writeArtifact(store, work.type, MergedBranches, work.body);
      const summary = await appendSegments(store, work.package.summary, work.segments ?? []);
      const log = await joinBranchTurns(store, work.package, work.branches ?? [], work.package.job_id);
      const pkg = {
        ...work.package,
        ...(summary !== undefined ? { summary } : {}),
        ...(log ? { memory_refs: withTranscript(work.package.memory_refs, log) } : {}),
        artifacts: [...work.package.artifacts, artifact],
      };
      const facts = deliveryFacts(pkg, MERGE_STAGE);
      const recorded = await store.recordStageCompletion(
        work.key,
        { package: pkg, artifact, cost_usd: 0, body: work.body },
        facts,
      );
      return asAnswered(recorded, facts);
    },
  };
}
