/** Reading the pieces of earlier stages that draft, judge and writeback build on. */
import type { HandoffV1 } from '../../contracts';
import { ChunksV1, IntakeV1, NoHitV1 } from '../../contracts/pipelines/ticket-artifacts';
import { type Store, readArtifactBody, requireArtifact } from '../../src';
import type { Retrieval } from './summary-policy';

export async function readIntake(store: Store, pkg: HandoffV1, stage: string): Promise<IntakeV1> {
  return readArtifactBody(store, requireArtifact(pkg, stage, 'intake.v1'), IntakeV1);
}

/** The newest chunks.v1 or no_hit.v1 among `artifacts`, wherever it sits (ticket-hub's merged
 * package has the account history and the merge after it). */
export async function readRetrieval(
  store: Store,
  pkg: Pick<HandoffV1, 'artifacts'>,
  stage: string,
): Promise<Retrieval> {
  const ref = requireArtifact(pkg, stage, 'chunks.v1', 'no_hit.v1');
  if (ref.type === 'chunks.v1')
    return { kind: 'chunks', chunks: (await readArtifactBody(store, ref, ChunksV1)).chunks };
  return { kind: 'no_hit', reason: (await readArtifactBody(store, ref, NoHitV1)).reason };
}
