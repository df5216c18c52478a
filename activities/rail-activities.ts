/** The rail's own activities: its record of deliveries, a fan-out's merge, an escalation's record,
 * a fork's evidence, its check that a snapshot a fold points at is stored. */
import { parseSnapshotUri, type HandoffV1 } from '../contracts';
import { sha256Hex } from '../src/worker/store/content';
import type { StageResult } from '../contracts/stages';
import type { Store } from '../src/worker/store';
import { earlierRunActivities } from './earlier-run';
import { escalationRecordActivities } from './escalation-records';
import { forkActivities } from './fork';
import { mergeActivities } from './merge';
import { asAnswered, deliveryFacts, deliveryScope, packageSha, scopedJob, scopedKey } from './stage';

/** The rail's own activity: the result recorded for a delivery, or null. A repeat of the same
 * package acks `duplicate`; a different package under the key comes back marked, to be refused. */
export function railActivities(store: Store) {
  return {
    priorDelivery: async ({
      delivery_key,
      package: pkg,
    }: {
      delivery_key: string;
      package?: HandoffV1;
    }): Promise<StageResult | null> => {
      const record = await store.findStageRecord(scopedKey(deliveryScope(), delivery_key));
      if (!record) return null;
      // The lookup is never the delivery that made the record; only the package can match.
      return pkg === undefined
        ? record.result
        : asAnswered(record, { delivery_sha: null, package_sha: packageSha(pkg) });
    },
    /** A result the rail accepted for a direct delivery, recorded by the rail itself (first one
     * wins: a stage that records its own leaves this a no-op), so a repeat is found by the
     * rail's lookup whichever worker served the stage. */
    recordDelivery: async ({
      delivery_key,
      stage,
      package: pkg,
      result,
    }: {
      delivery_key: string;
      stage: string;
      package: HandoffV1;
      result: StageResult;
    }): Promise<void> => {
      const scope = deliveryScope();
      await store.recordStageCompletion(scopedKey(scope, delivery_key), result, {
        ...deliveryFacts(pkg, stage),
        job_id: scopedJob(scope, pkg.job_id),
      });
    },
    /** Whether the store holds the snapshot at `snapshot`, bytes that hash to its address: asked
     * by the rail before it takes a package folded behind it (a stage's word that its worker
     * stored it is a claim; `jobArtifacts` reads it from the store later). */
    snapshotHeld: async ({ snapshot }: { snapshot: string }): Promise<boolean> => {
      const address = parseSnapshotUri(snapshot);
      const text = address ? await store.getContent(address.sha) : null;
      return address !== undefined && text !== null && sha256Hex(text) === address.sha;
    },
    ...mergeActivities(store),
    ...escalationRecordActivities(store),
    ...earlierRunActivities(),
    ...forkActivities(store),
  };
}
