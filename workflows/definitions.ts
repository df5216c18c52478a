/**
 * Handler definitions of the rail: the names operators use from the Web UI, the CLI and the
 * client. Shared by workflow and client code so both spell them the same way.
 */
import { defineQuery, defineUpdate } from '@temporalio/workflow';
import type { AckRecord, HandoffV1, HumanDecision, JobStatus } from '../contracts/rail';

/** Live status: `running` while stages work, `escalated` while a human decides, then final. */
export type RailStatus = 'running' | JobStatus;

export interface Escalation {
  reasons: string[];
  /** The stage the job was about to run (or `route` when the routing table sent it here). */
  blocked: string;
  /** Actions `decide` accepts for this escalation. */
  options: HumanDecision['action'][];
  since: string;
  /** A tool call that waits for this human's word (per-call approval): approve it with
   * `tool_call: { digest, verdict }`, the digest shown here. */
  tool_call?: { name: string; call_id: string; args: unknown; digest: string; editable?: true };
}

export interface JobStatusView {
  job_id: string;
  status: RailStatus;
  stage: string;
  hops: number;
  usd_remaining: number;
  revisions_remaining: number;
  spent_usd: number;
  /** What running hops hold reserved from the wallet (usd_remaining less this is what a new hop
   * can reserve), and by whom. Empty once the job has ended. */
  reserved_usd: number;
  reservations: { stage: string; hop: number; usd: number }[];
  last_verdict: string;
  last_ack?: AckRecord;
  escalation?: Escalation;
  /** Why the job ended, once it has. */
  reason?: string;
  /** Once the job has continued as new: this run's number (from 1), and the acks of earlier
   * runs the `acks` query no longer returns (it keeps the newest), counted by kind. */
  runs?: number;
  earlier_acks?: Record<string, number>;
}

export interface DecisionReceipt {
  action: HumanDecision['action'];
  actor: string;
  /** What the rail does next. */
  next: string;
}

export const packageQuery = defineQuery<HandoffV1>('package');
/** Every ack of every hop, oldest first; once the job has continued as new, the newest ones it
 * kept (`status.earlier_acks` counts the rest by kind). */
export const acksQuery = defineQuery<AckRecord[]>('acks');
export const statusQuery = defineQuery<JobStatusView>('status');
/** What a follower reads each time the rail moves: the status and the acks, read at one moment
 * (one query where `status` and `acks` take two: a query is a task the worker serves). */
export interface RailProgress {
  status: JobStatusView;
  acks: AckRecord[];
}
export const progressQuery = defineQuery<RailProgress>('progress');
/** A snapshot no stage's worker stored (a refused hop, a duplicate, a hop to a human), by its
 * `handrail://snapshots/…` address: its canonical JSON, or null when the job holds none by it. */
export const snapshotQuery = defineQuery<string | null, [string]>('snapshot');
export const decideUpdate = defineUpdate<DecisionReceipt, [HumanDecision]>('decide');
