/**
 * The writers' own gate behind the rail's: the newest verdict passes, the package says so, and it
 * judged the latest summary (a pass for an older draft does not cover a newer one).
 */
import { VerdictV1, type Artifact, type HandoffV1 } from '../contracts';
import type { Store } from '../src/worker/store';
import { latestArtifact, readArtifactBody, requireArtifact } from './artifacts';
import { stageFailure } from './failures';

/** The summary a passing verdict covers, or a `VerdictNotPassing` failure saying why not. */
export async function passedSummary(store: Store, pkg: HandoffV1, stage: string): Promise<Artifact> {
  const verdict = await readArtifactBody(store, requireArtifact(pkg, stage, 'verdict.v1'), VerdictV1);
  const summary = latestArtifact(pkg, 'summary_md');
  const refuse = (why: string) => stageFailure('VerdictNotPassing', `${stage} refuses: ${why}`);
  if (verdict.verdict !== 'pass') throw refuse(`the verdict is "${verdict.verdict}" (${verdict.failures.join('; ')})`);
  if (pkg.evaluator.last_verdict !== 'pass')
    throw refuse(`the package's last verdict is "${pkg.evaluator.last_verdict}"`);
  if (!summary) throw refuse('there is no summary to write');
  if (verdict.summary_hash !== summary.hash)
    throw refuse('the passing verdict judged another summary than the latest one');
  return summary;
}
