/**
 * A remote A2A task that asked for input, kept for the human's answer. The stage fails
 * `RemoteInputRequired` and the job escalates; the human's decision retries the hop under a new
 * delivery key, with the decided record as a hook result. That delivery answers the waiting task
 * (a follow-up message naming it) instead of starting another, so the remote agent goes on where
 * it stopped, and one remote task is charged once. Kept in the store's stage steps under the
 * job's stage (`waiting:a2a-input:<job>:<stage>`, spared by the store's pruning): one step per
 * round of asking (`asks:<hop>:<task>`, the hop whose delivery heard the question) and one per
 * round answered (`answered:<hop>:<task>`, holding the delivery key that answered). A task may ask
 * again once answered, in a later hop: that is a new round, answerable like the first. Steps kept
 * before rounds had hops (`asks:<task>`, `answered:<task>`) still pair up, by the same suffix.
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

/** A question the human is to answer: the task, the round it asked in, and the answer. */
export interface WaitingQuestion {
  task: WaitingTask;
  /** The round's key, the suffix of its `asks:` step (`answered:<round>` once answered). */
  round: string;
  answer: string;
  /** This delivery already sent the answer (an earlier attempt of it, which died before it
   * journalled the task): follow the task, send nothing. */
  sent: boolean;
}

/** Notes that the remote task asks for input, heard by this delivery: a round of its own, so a
 * task that asks again after an answer is waiting again (the first round's note stays answered). */
export async function noteWaiting(
  store: Pick<Store, 'recordStageStep'>,
  deliveryKey: string,
  task: Omit<WaitingTask, 'hop'>,
): Promise<void> {
  const waiting: WaitingTask = { ...task, hop: hopOf(deliveryKey) };
  await store.recordStageStep(waitingKey(deliveryKey), `asks:${waiting.hop}:${task.task_id}`, JSON.stringify(waiting));
}

/**
 * The newest round of this stage's asking that an earlier hop heard and nobody answered — or that
 * this very delivery answered (a retried attempt resumes it) — with the human's answer (the
 * decided record's text), when this delivery brings one; else undefined.
 */
export async function waitingTaskToAnswer(
  store: Pick<Store, 'findStageSteps'>,
  deliveryKey: string,
  hooks: readonly HookResult[],
): Promise<WaitingQuestion | undefined> {
  const decided = hooks.find((h) => h.event === ESCALATION_RECORD_DECIDED_EVENT);
  if (!decided) return undefined;
  const steps = await store.findStageSteps(waitingKey(deliveryKey));
  const open = [...steps.entries()]
    .filter(([step]) => step.startsWith('asks:'))
    .map(([step, content]) => {
      const round = step.slice('asks:'.length);
      return { task: JSON.parse(content) as WaitingTask, round, answeredBy: steps.get(`answered:${round}`) };
    })
    .filter((r) => r.task.hop < hopOf(deliveryKey) && (r.answeredBy ?? deliveryKey) === deliveryKey)
    .sort((a, b) => b.task.hop - a.task.hop);
  const newest = open[0];
  return (
    newest && { task: newest.task, round: newest.round, answer: decided.text, sent: newest.answeredBy !== undefined }
  );
}

/** Notes that this delivery answered the round (a later decision does not answer it again; a
 * retry of this delivery follows the task without answering twice). */
export async function noteAnswered(
  store: Pick<Store, 'recordStageStep'>,
  deliveryKey: string,
  round: string,
): Promise<void> {
  await store.recordStageStep(waitingKey(deliveryKey), `answered:${round}`, deliveryKey);
}
