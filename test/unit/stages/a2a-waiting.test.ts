/**
 * The waiting notes of a delegating stage, one per round of asking: a task that asks again after
 * an answer is answerable again, a delivery's retry finds the round it answered itself, and the
 * notes kept before rounds had hops still pair up.
 */
import { describe, expect, it } from 'vitest';
import { noteAnswered, noteWaiting, waitingTaskToAnswer } from '../../../activities/a2a-waiting';
import { ESCALATION_RECORD_DECIDED_EVENT } from '../../../contracts/escalation-record-delta';
import { WAITING_STEPS_PREFIX } from '../../../src/worker/store';

/** The store's stage steps, first record wins. */
function steps() {
  const held = new Map<string, Map<string, string>>();
  return {
    held,
    async findStageSteps(key: string) {
      return new Map(held.get(key));
    },
    async recordStageStep(key: string, step: string, content: string) {
      const of = held.get(key) ?? new Map<string, string>();
      held.set(key, of);
      if (!of.has(step)) of.set(step, content);
      return of.get(step)!;
    },
  };
}

const decided = (text: string) => [{ event: ESCALATION_RECORD_DECIDED_EVENT, text }];
const task = { agent: 'http://agent', task_id: 't-1', context_id: 'ctx-job:delegate:0' };

describe('a2a waiting notes', () => {
  it('a task that asks again after an answer is a new round, answered by the next decision', async () => {
    const store = steps();
    await noteWaiting(store, 'job:delegate:0', task);
    const first = await waitingTaskToAnswer(store, 'job:delegate:2', decided('INV-7'));
    expect(first).toMatchObject({ task: { ...task, hop: 0 }, round: '0:t-1', answer: 'INV-7', sent: false });
    await noteAnswered(store, 'job:delegate:2', first!.round);

    await noteWaiting(store, 'job:delegate:2', task);
    const second = await waitingTaskToAnswer(store, 'job:delegate:4', decided('November'));
    expect(second).toMatchObject({ task: { ...task, hop: 2 }, round: '2:t-1', answer: 'November', sent: false });
    await noteAnswered(store, 'job:delegate:4', second!.round);
    expect(await waitingTaskToAnswer(store, 'job:delegate:6', decided('again'))).toBeUndefined();
  });

  it('a retry of the delivery that answered finds its own round, sent; another delivery does not', async () => {
    const store = steps();
    await noteWaiting(store, 'job:delegate:0', task);
    await noteAnswered(store, 'job:delegate:2', '0:t-1');
    expect(await waitingTaskToAnswer(store, 'job:delegate:2', decided('INV-7'))).toMatchObject({
      round: '0:t-1',
      sent: true,
    });
    expect(await waitingTaskToAnswer(store, 'job:delegate:3', decided('INV-7'))).toBeUndefined();
  });

  it('notes kept before rounds had hops pair up by their suffix', async () => {
    const store = steps();
    const key = `${WAITING_STEPS_PREFIX}a2a-input:job:delegate`;
    await store.recordStageStep(key, 'asks:t-1', JSON.stringify({ ...task, hop: 0 }));
    const legacy = await waitingTaskToAnswer(store, 'job:delegate:2', decided('INV-7'));
    expect(legacy).toMatchObject({ round: 't-1', sent: false });
    await store.recordStageStep(key, 'answered:t-1', 'job:delegate:2');
    expect(await waitingTaskToAnswer(store, 'job:delegate:4', decided('again'))).toBeUndefined();
  });
});
