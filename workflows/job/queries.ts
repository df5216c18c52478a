/** The job's queries: what operators read while it runs (CLI, Web UI, client). */
import { setHandler } from '@temporalio/workflow';
import { acksQuery, packageQuery, progressQuery, snapshotQuery, statusQuery } from '../definitions';
import type { JobState } from './state';

export function answerQueries(job: JobState): void {
  setHandler(packageQuery, () => job.package, { description: 'The handoff.v1 package as it stands now.' });
  setHandler(acksQuery, () => job.acks, {
    description:
      'Every ack of every hop, oldest first; after a continue-as-new, the newest kept (status.earlier_acks counts the rest).',
  });
  setHandler(statusQuery, () => job.view(), {
    description: 'Status, stage, hops, wallet, and the open escalation if any.',
  });
  setHandler(progressQuery, () => ({ status: job.view(), acks: job.acks }), {
    description: 'The status and every ack at one moment: what a follower of the job reads when the rail moves.',
  });
  setHandler(snapshotQuery, (uri) => job.snapshots.get(uri) ?? null, {
    description:
      "A refused, duplicate or human hop's package as delivered, by its snapshot address (the acks name it).",
  });
}
