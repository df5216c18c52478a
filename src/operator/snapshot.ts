/**
 * A hop's snapshot as an operator reads it (`handrail show <job> --hop N`): the package exactly as
 * the rail delivered it at that hop. A stage's worker stored it in the store when the stage took
 * the hop; a refused, duplicate or human hop's the job itself answers for (the `snapshot` query).
 * Either way the bytes are checked against their address.
 */
import type { Client } from '@temporalio/client';
import { parseSnapshotUri } from '../../contracts';
import { snapshotQuery } from '../../workflows/definitions';
import { sha256Hex } from '../worker/store/content';
import type { Store } from '../worker/store';
import { getJob } from './client';

export interface HopSnapshot {
  hop: number;
  stage: string;
  ack: string;
  snapshot: string;
  /** Where the bytes came from: the store, the job (query), or nowhere any longer. */
  source: 'store' | 'job' | 'missing';
  package: unknown;
}

/** `--hop N` names a hop the job's acks do not have. */
export class HopNotFoundError extends Error {
  override readonly name = 'HopNotFoundError';
}

/** The snapshot of every ack of hop `hop` that names one (several: a fan-out's branches share a count). */
export async function hopSnapshots(client: Client, store: Store, jobId: string, hop: number): Promise<HopSnapshot[]> {
  const { acks } = await getJob(client, jobId);
  const atHop = acks.filter((a) => a.hop === hop && a.snapshot !== undefined);
  if (atHop.length === 0) {
    const hops = [...new Set(acks.filter((a) => a.snapshot !== undefined).map((a) => a.hop))];
    throw new HopNotFoundError(
      `job ${jobId} has no snapshot at hop ${hop}; hops with one: ${hops.join(', ') || 'none'}`,
    );
  }
  return Promise.all(
    atHop.map(async (a): Promise<HopSnapshot> => {
      const uri = a.snapshot!;
      const address = parseSnapshotUri(uri);
      const verified = (text: string | null) =>
        text !== null && address !== undefined && address.jobId === jobId && sha256Hex(text) === address.sha
          ? text
          : null;
      let source: HopSnapshot['source'] = 'store';
      let text = verified(address ? await store.getContent(address.sha) : null);
      if (text === null) {
        source = 'job';
        text = verified(await client.workflow.getHandle(jobId).query(snapshotQuery, uri));
      }
      if (text === null) source = 'missing';
      return {
        hop: a.hop,
        stage: a.stage,
        ack: a.ack,
        snapshot: uri,
        source,
        package: text === null ? null : JSON.parse(text),
      };
    }),
  );
}

export function snapshotText(snapshots: readonly HopSnapshot[]): string {
  return snapshots
    .map((s) => {
      const head = `hop ${s.hop} · ${s.stage} · ${s.ack} · ${s.snapshot} (${s.source === 'missing' ? 'not in the store, and the job no longer holds it' : `from the ${s.source}`})`;
      return s.package === null ? head : `${head}\n${JSON.stringify(s.package, null, 2)}`;
    })
    .join('\n\n');
}
