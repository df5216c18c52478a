/** The rail's own activities: the duplicate lookup, a fan-out's merge, an escalation's record. */
import type { HandoffV1 } from '../contracts';
import type { StageResult } from '../contracts/stages';
import type { Store } from '../src/worker/store';
import { handoffRecordActivities } from './handoff-records';
import { mergeActivities } from './merge';
import { asAnswered, deliveryScope, packageSha, scopedKey } from './stage';

/** The rail's own activity: the result recorded for a delivery, or null. A repeat of the same
 * package acks `duplicate`; a different package under the key comes back marked, to be refused. */
export function railActivities(store: Store) {
  return {
    priorDelivery: async ({ delivery_key, package: pkg }: { delivery_key: string; package?: HandoffV1 }): Promise<StageResult | null> => {
      const record = await store.findStageRecord(scopedKey(deliveryScope(), delivery_key));
      if (!record) return null;
      // The lookup is never the delivery that made the record; only the package can match.
      return pkg === undefined ? record.result : asAnswered(record, { delivery_sha: null, package_sha: packageSha(pkg) });
    },
    ...mergeActivities(store),
    ...handoffRecordActivities(store),
  };
}
