/**
 * A remote A2A task that asked for input, kept for the human's answer. The stage fails
 * `RemoteInputRequired` and the job escalates; the human's decision retries the hop under a new
 * delivery key, with the decided record as a hook result. That delivery answers the waiting task
 * (a follow-up message naming it) instead of starting another, so the remote agent goes on where
 * it stopped, and one remote task is charged once. Kept in the store's stage steps under the
 * job's stage (`waiting:a2a-input:<job>:<stage>`, spared by the store's pruning), one step per task
 * asking and one per task answered.
 */
import { ESCALATION_RECORD_DECIDED_EVENT } from '../contracts/escalation-record-delta';
import type { HookResult } from '../contracts/stages';
import { WAITING_STEPS_PREFIX, type Store } from '../src/worker/store';

export interface WaitingTask {
  agent: string;
  task_id: string;
  context_id: string;
  /** The hop whose delivery heard the question. */
  hop: number;
}

/** The job's stage, as scoped by who delivers: the delivery key less its hop. */
const waitingKey = (deliveryKey: string) =>
  `${WAITING_STEPS_PREFIX}a2a-input:${deliveryKey.slice(0, deliveryKey.lastIndexOf(':'))}`;
const hopOf = (deliveryKey: string) => Number(deliveryKey.slice(deliveryKey.lastIndexOf(':') + 1)) || 0;

/** Notes that the remote task asks for input, heard by this delivery. */
export async function noteWaiting(
  store: Pick<Store, 'recordStageStep'>,
  deliveryKey: string,
  task: Omit<WaitingTask, 'hop'>,
): Promise<void> {
  const waiting: WaitingTask = { ...task, hop: hopOf(deliveryKey) };
  await store.recordStageStep(waitingKey(deliveryKey), `asks:${task.task_id}`, JSON.stringify(waiting));
}

/**
 * The newest task of this stage that asked for input and was not answered, with the human's
 * answer (the decided record's text), when this delivery brings one; else undefined.
 */
export async function waitingTaskToAnswer(
  store: Pick<Store, 'findStageSteps'>,
  deliveryKey: string,
  hooks: readonly HookResult[],
): Promise<{ task: WaitingTask; answer: string } | undefined> {
  const decided = hooks.find((h) => h.event === ESCALATION_RECORD_DECIDED_EVENT);
  if (!decided) return undefined;
  const steps = await store.findStageSteps(waitingKey(deliveryKey));
  const waiting = [...steps.entries()]
    .filter(([step]) => step.startsWith('asks:') && !steps.has(`answered:${step.slice('asks:'.length)}`))
    .map(([, content]) => JSON.parse(content) as WaitingTask)
    .filter((t) => t.hop < hopOf(deliveryKey))
    .sort((a, b) => b.hop - a.hop);
  return waiting[0] && { task: waiting[0], answer: decided.text };
}

/** Notes that this delivery answered the task (a later decision does not answer it again). */
export async function noteAnswered(
  store: Pick<Store, 'recordStageStep'>,
  deliveryKey: string,
  taskId: string,
): Promise<void> {
  await store.recordStageStep(waitingKey(deliveryKey), `answered:${taskId}`, deliveryKey);
}
