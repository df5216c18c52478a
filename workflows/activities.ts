/**
 * The rail's own activities as its workflows call them, typed by the module that serves them
 * (activities/rail-activities.ts), each group with the timeouts its writes need.
 */
import { proxyActivities } from '@temporalio/workflow';
import type { RailActivities } from '../activities';

// One indexed read (or keyed insert). If the store stays unreachable the hop cannot be proven
// new, so the delivery fails (visibly, with no write) rather than risk a second write.
export const { priorDelivery, recordDelivery } = proxyActivities<
  Pick<RailActivities, 'priorDelivery' | 'recordDelivery'>
>({
  startToCloseTimeout: '10s',
  retry: { maximumAttempts: 6, maximumInterval: '10s' },
  summary: 'delivery record',
});

// One read: is the snapshot a fold points at in the store? Asked only for a package folded behind
// its own hop's snapshot (patch `fold-snapshot-checked`, run-hop.ts). A store that stays down
// leaves the fold unproven, and the rail refuses it as it would an unstored one.
export const { snapshotHeld } = proxyActivities<Pick<RailActivities, 'snapshotHeld'>>({
  startToCloseTimeout: '10s',
  retry: { maximumAttempts: 6, maximumInterval: '10s' },
  summary: 'snapshot check',
});

// The merge of a fan-out: one write of a content-addressed artifact and one keyed record.
export const { mergeBranches } = proxyActivities<Pick<RailActivities, 'mergeBranches'>>({
  startToCloseTimeout: '30s',
  retry: { maximumAttempts: 6, maximumInterval: '10s' },
  summary: 'merge',
});

// An escalation's record. Its writes are keyed; a store that stays down only costs the
// record (logged), never the escalation.
export const { beginEscalationRecord, closeEscalationRecord } = proxyActivities<
  Pick<RailActivities, 'beginEscalationRecord' | 'closeEscalationRecord'>
>({
  startToCloseTimeout: '30s',
  retry: { maximumAttempts: 8, maximumInterval: '30s' },
  summary: 'handoff record',
});

// A job id started again after its job completed: the earlier run's result, read once.
export const { earlierJobResult } = proxyActivities<Pick<RailActivities, 'earlierJobResult'>>({
  startToCloseTimeout: '30s',
  retry: { maximumAttempts: 4, maximumInterval: '10s' },
  summary: 'earlier run',
});

// A fork's evidence, recorded under the fork once before its first hop: keyed inserts.
export const { recordForkEvidence } = proxyActivities<Pick<RailActivities, 'recordForkEvidence'>>({
  startToCloseTimeout: '30s',
  retry: { maximumAttempts: 6, maximumInterval: '10s' },
  summary: 'fork evidence',
});
