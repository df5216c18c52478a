/**
 * What a rolled-out job's runs say (bench/rollout-run.ts): every run of its continue-as-new chain,
 * which build completed each workflow task and when, the non-determinism failures, the patch
 * markers and whether the server ever told the job that its target version changed.
 */
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import type { History } from './history';

export interface RunFacts {
  events: number;
  /** The build id of each completed workflow task, with its time (ms since the epoch). */
  tasks: { build: string; at: number }[];
  nondeterminism: number;
  patchMarkers: number;
  /** WorkflowTaskStarted events that carry `targetWorkerDeploymentVersionChanged`. */
  targetChanged: number;
  activities: string[];
  continuedAs?: string;
}

const NDE = temporal.api.enums.v1.WorkflowTaskFailedCause.WORKFLOW_TASK_FAILED_CAUSE_NON_DETERMINISTIC_ERROR;
const millis = (t: temporal.api.history.v1.IHistoryEvent['eventTime']) =>
  Number(t?.seconds ?? 0) * 1000 + Math.floor((t?.nanos ?? 0) / 1e6);

export function runFacts(history: History): RunFacts {
  const events = history.events ?? [];
  const facts: RunFacts = {
    events: events.length,
    tasks: [],
    nondeterminism: 0,
    patchMarkers: 0,
    targetChanged: 0,
    activities: [],
  };
  for (const e of events) {
    const done = e.workflowTaskCompletedEventAttributes;
    if (done)
      facts.tasks.push({
        build: done.deploymentVersion?.buildId || done.workerVersion?.buildId || '',
        at: millis(e.eventTime),
      });
    if (e.workflowTaskFailedEventAttributes?.cause === NDE) facts.nondeterminism++;
    if (e.markerRecordedEventAttributes?.markerName === 'core_patch') facts.patchMarkers++;
    if (e.workflowTaskStartedEventAttributes?.targetWorkerDeploymentVersionChanged) facts.targetChanged++;
    const activity = e.activityTaskScheduledEventAttributes?.activityType?.name;
    if (activity) facts.activities.push(activity);
    const next = e.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId;
    if (next) facts.continuedAs = next;
  }
  return facts;
}

/** Every run of a job, first to last, following its continue-as-new chain. */
export async function jobRuns(client: Client, jobId: string, firstRunId: string): Promise<RunFacts[]> {
  const runs: RunFacts[] = [];
  for (let runId: string | undefined = firstRunId; runId !== undefined;) {
    const facts = runFacts(await client.workflow.getHandle(jobId, runId).fetchHistory());
    runs.push(facts);
    runId = facts.continuedAs;
  }
  return runs;
}
