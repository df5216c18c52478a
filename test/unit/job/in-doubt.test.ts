/**
 * A writer's write in doubt on the acks: the writer's hop that failed WriteInDoubt says
 * `escalated`, the retried hop says how its receipt settled it, the human's hop says their word;
 * any other hop is left as it is.
 */
import { describe, expect, it } from 'vitest';
import type { AckRecord, StageResult, WriteReceipt } from '../../../contracts';
import { ticketTriage } from '../../../contracts/pipelines';
import { decidedInDoubt, withInDoubt } from '../../../workflows/job/in-doubt';
import type { HopOutcome } from '../../../workflows/run-hop';
import { fixturePackage } from '../rail/helpers';

const KEY = 'job-1:writeback:receipt.v1';
const accepted = { ...fixturePackage().ack!, stage: 'writeback', ack: 'accepted' } as AckRecord;
const receipt: WriteReceipt = {
  write_key: KEY,
  system: 'crm',
  reference: 'pay_1',
  status: 'existing',
  written_at: '2026-12-05T00:00:00.000Z',
};
const hop = (over: Partial<HopOutcome>): HopOutcome => ({
  acks: [accepted],
  ok: true,
  stage: 'writeback',
  costUsd: 0,
  overspentUsd: 0,
  ...over,
});
const answered = (r: WriteReceipt) => ({ result: { receipt: r } as StageResult });

describe('withInDoubt', () => {
  it("the writer's hop that failed WriteInDoubt: escalated, with its write key", () => {
    const failure = `writeback failed: WriteInDoubt: writeback: write ${KEY} to crm is in doubt`;
    expect(withInDoubt(hop({ ok: false, failure, failureType: 'WriteInDoubt' }), ticketTriage, 'job-1')).toEqual([
      { ...accepted, in_doubt: { resolution: 'escalated', write_key: KEY } },
    ]);
  });

  it('a retried writer whose receipt settled the write in doubt: its resolution, reference and sends', () => {
    const settled = { ...receipt, in_doubt: { resolution: 'found_by_lookup' as const, sends: 1 } };
    expect(withInDoubt(hop(answered(settled)), ticketTriage, 'job-1')[0]!.in_doubt).toEqual({
      resolution: 'found_by_lookup',
      write_key: KEY,
      reference: 'pay_1',
      sends: 1,
    });
  });

  it('leaves a write never in doubt, another failure, another stage and a refused hop as they are', () => {
    const plain = [
      hop(answered(receipt)),
      hop({ ok: false, failure: 'writeback failed: WriteRefused: crm refused write', failureType: 'WriteRefused' }),
      hop({
        ok: false,
        stage: 'judge',
        acks: [{ ...accepted, stage: 'judge' }],
        failure: 'judge failed: WriteInDoubt: x',
        failureType: 'WriteInDoubt',
      }),
      hop({
        ok: false,
        acks: [{ ...accepted, ack: 'rejected_budget' }],
        failure: 'writeback failed: WriteInDoubt: x',
        failureType: 'WriteInDoubt',
      }),
      // A failure of another type whose message spells the words is not taken for one in doubt:
      // the message is the stage's, the type is the failure's own.
      hop({ ok: false, failure: 'writeback failed: Error: upstream said " failed: WriteInDoubt: "' }),
      hop({ ok: false, failure: 'writeback failed: WriteInDoubt: untyped', failureType: 'StageInputInvalid' }),
    ];
    for (const outcome of plain) expect(withInDoubt(outcome, ticketTriage, 'job-1')).toBe(outcome.acks);
  });
});

describe('decidedInDoubt', () => {
  it("says the human's word: it happened with the reference, or send it; nothing without a word", () => {
    const approve = { action: 'approve' as const, actor: 'ops.lead' };
    expect(decidedInDoubt({ ...approve, in_doubt: { happened: 'pay_9' } })).toEqual({
      resolution: 'human_happened',
      reference: 'pay_9',
    });
    expect(decidedInDoubt({ ...approve, in_doubt: { send: true } })).toEqual({ resolution: 'human_send' });
    expect(decidedInDoubt(approve)).toBeUndefined();
  });
});
