import { msToNumber } from '@temporalio/common/lib/time';
import { describe, expect, it } from 'vitest';
import { judgeStage, ticketTriage, writebackStage } from '../../../contracts/pipelines/ticket-triage';
import {
  STAGE_FAILURE_TYPES,
  checkStageRegistry,
  defineStage,
  writeKey,
  type StageCard,
} from '../../../contracts/stages';
import { definePipeline } from '../../../contracts/pipeline';

const ENTRY = [ticketTriage.entry];
const replace = (card: StageCard) => ticketTriage.cards.map((c) => (c.name === card.name ? card : c));

describe('stage cards', () => {
  it('accepts the reference triage pipeline', () => {
    expect(checkStageRegistry(ticketTriage.cards, ENTRY)).toEqual([]);
    expect(ticketTriage.get('judge')).toBe(judgeStage);
  });

  it('fills defaults: worker role, handoff.v1, no tools, business failures non-retryable', () => {
    const card = defineStage({
      name: 'translate',
      accepts: ['summary_md'],
      outputs: ['summary_md'],
      criteria: ['same meaning'],
      nominalCostUsd: 0.002,
    });
    expect(card).toMatchObject({ role: 'worker', packageVersions: ['handoff.v1'], tools: [], writes: null });
    expect(card.activity.retry.nonRetryableErrorTypes).toEqual(expect.arrayContaining([...STAGE_FAILURE_TYPES]));
    expect(Object.isFrozen(card.accepts)).toBe(true);
  });

  it('reads the earlier name maxCostUsd as worstCaseCostUsd, and the card carries only the new one', () => {
    const spec = {
      name: 'translate',
      accepts: ['summary_md'],
      outputs: ['summary_md'],
      criteria: [],
      nominalCostUsd: 0,
    };
    const card = defineStage({ ...spec, maxCostUsd: 0.004 });
    expect(card.worstCaseCostUsd).toBe(0.004);
    expect(card).not.toHaveProperty('maxCostUsd');
    expect(defineStage({ ...spec, worstCaseCostUsd: 0.003, maxCostUsd: 0.004 }).worstCaseCostUsd).toBe(0.003);
  });

  it('puts activity options on every card: timeouts, bounded retries, non-retryable business failures', () => {
    for (const card of ticketTriage.cards) {
      // Durations Temporal reads as positive milliseconds (0 or an unparsable string is no timeout).
      for (const timeout of ['startToCloseTimeout', 'scheduleToStartTimeout', 'heartbeatTimeout'] as const)
        expect(msToNumber(card.activity[timeout]), `${card.name} ${timeout}`).toBeGreaterThan(0);
      expect(card.activity.retry.maximumAttempts).toBeGreaterThanOrEqual(1);
      expect(card.activity.retry.nonRetryableErrorTypes).toEqual(expect.arrayContaining([...STAGE_FAILURE_TYPES]));
      expect(card.nominalCostUsd).toBeGreaterThanOrEqual(0);
    }
  });

  it('keys the writer’s write job_id:stage:artifact_type, with no attempt number', () => {
    expect(writeKey('tkt_1', writebackStage)).toBe('tkt_1:writeback:receipt.v1');
  });

  it('adding a stage takes a few lines', () => {
    const translate = defineStage({
      name: 'translate',
      accepts: ['summary_md'],
      outputs: ['summary_md'],
      criteria: ['same meaning'],
      nominalCostUsd: 0.002,
    });
    expect(checkStageRegistry([...ticketTriage.cards, translate], ENTRY)).toEqual([]);
  });
});

describe('registry refusals', () => {
  const refusal = (cards: readonly StageCard[]) => {
    const problems = checkStageRegistry(cards, ENTRY);
    if (problems.length === 0) throw new Error('registry was accepted');
    return problems.join('\n');
  };

  it('refuses two writers for one external system, naming both', () => {
    const second = defineStage({ ...writebackStage, name: 'crm_sync' });
    expect(refusal([...ticketTriage.cards, second])).toMatch(
      /system "crm" has 2 writers \(writeback, crm_sync\); exactly one stage may write it/,
    );
  });

  it("refuses return-to-sender options it cannot follow: an unknown stage, itself, a stage that takes none of the sender's outputs", () => {
    const intake = ticketTriage.get('intake')!;
    const sendTo = (to: string) => defineStage({ ...intake, onTargetUnavailable: { action: 'reroute', to } });
    expect(refusal(replace(sendTo('nowhere')))).toMatch(
      /stage "intake" sends returned packages to "nowhere", which is not registered/,
    );
    expect(refusal(replace(sendTo('intake')))).toMatch(/stage "intake" sends returned packages to itself/);
    expect(refusal(replace(sendTo('judge')))).toMatch(
      /stage "intake" sends returned packages to "judge", which takes none of its outputs \(intake\.v1\)/,
    );
    expect(checkStageRegistry(replace(defineStage({ ...intake, onTargetUnavailable: 'escalate' })), ENTRY)).toEqual([]);
  });

  it('refuses a judge that holds a write tool', () => {
    const judge = defineStage({ ...judgeStage, tools: [{ name: 'crm.patch', access: 'write', system: 'crm' }] });
    expect(refusal(replace(judge))).toMatch(
      /stage "judge" is a critic and must hold no write tools \(holds crm\.patch on crm\)/,
    );
  });

  it('refuses a judge that declares a system it writes', () => {
    const judge = defineStage({ ...judgeStage, writes: 'crm' });
    expect(refusal(replace(judge))).toMatch(/critic and must hold no write tools/);
  });

  it('refuses a stage name the rail could not deliver to (over 64 characters)', () => {
    const long = defineStage({
      name: `translate-${'x'.repeat(60)}`,
      accepts: ['summary_md'],
      outputs: ['summary_md'],
      criteria: ['same meaning'],
      nominalCostUsd: 0,
    });
    expect(checkStageRegistry([...ticketTriage.cards, long], ENTRY)).toEqual([
      `stage name "${long.name}" is not a lowercase slug of at most 64 characters`,
    ]);
  });

  it('refuses a stage that names no output type', () => {
    const retrieve = defineStage({ ...ticketTriage.cards[1]!, outputs: [] });
    expect(refusal(replace(retrieve))).toMatch(/stage "retrieve" must name its output artifact type/);
  });

  it('refuses write tools on a stage that declares no write system, and writers without a write tool', () => {
    const draft = defineStage({
      ...ticketTriage.cards[2]!,
      tools: [{ name: 'email.send', access: 'write', system: 'email' }],
    });
    const writer = defineStage({ ...writebackStage, tools: [] });
    expect(refusal(replace(draft))).toMatch(
      /stage "draft" holds write tools \(email\.send on email\) but declares no system it writes/,
    );
    expect(refusal(replace(writer))).toMatch(/stage "writeback" writes "crm" but holds no write tool for it/);
  });

  it('definePipeline refuses a writer without a reconcile mode for the system it writes, naming the three choices', () => {
    const { reconcile: _mode, ...unreconciled } = writebackStage;
    const define = (writer: StageCard) =>
      definePipeline({
        name: 'ticket-triage',
        entry: ticketTriage.entrySpec,
        stages: replace(writer),
        routes: ticketTriage.routes,
        revisits: ticketTriage.revisits,
        reviser: 'draft',
      });
    expect(() => define(unreconciled)).toThrow(
      `stage "writeback" writes "crm" but declares no reconcile mode for a write in doubt; choose reconcile: 'idempotent' (the system dedupes by the write key it is sent: resend), 'lookup' (a read by the write key (or client reference) says whether it happened: adopt its reference, or send), 'none' (it cannot be known: the job escalates to a human with the evidence, who says it happened or to send it)`,
    );
    expect(refusal(replace({ ...writebackStage, reconcile: 'maybe' as 'none' }))).toMatch(
      /stage "writeback" writes "crm" but declares reconcile "maybe" for a write in doubt; choose reconcile: 'idempotent'/,
    );
    expect(refusal(replace({ ...judgeStage, reconcile: 'lookup' }))).toBe(
      'stage "judge" declares reconcile "lookup" but writes no system',
    );
    for (const reconcile of ['idempotent', 'lookup', 'none'] as const)
      expect(checkStageRegistry(replace({ ...writebackStage, reconcile }), ENTRY)).toEqual([]);
  });

  it('refuses a tool priced below zero or at no finite amount per call', () => {
    const draft = defineStage({
      ...ticketTriage.cards[2]!,
      tools: [{ name: 'wiki.search', access: 'read', system: 'wiki', usdPerCall: -0.01 }],
    });
    expect(refusal(replace(draft))).toMatch(/stage "draft" prices tool wiki\.search at -0\.01 per call/);
  });

  it('refuses inputs nobody produces, duplicate names, bad fallbacks and nonsense costs — all at once', () => {
    const orphan = defineStage({
      name: 'orphan',
      accepts: ['summary.v9'],
      outputs: ['note.v1'],
      criteria: [],
      nominalCostUsd: -1,
      fallback: 'ghost',
    });
    const message = refusal([...ticketTriage.cards, orphan, orphan]);
    expect(message).toMatch(/stage "orphan" is defined twice/);
    expect(message).toMatch(/accepts "summary\.v9", which no stage produces/);
    expect(message).toMatch(/falls back to "ghost", which is not registered/);
    expect(message).toMatch(/nominal cost -1/);
  });

  it('refuses a fallback that cannot take the stage’s input', () => {
    const draft = defineStage({ ...ticketTriage.cards[2]!, fallback: 'judge' });
    expect(refusal(replace(draft))).toMatch(
      /falls back to "judge", which does not accept chunks\.v1, no_hit\.v1, verdict\.v1/,
    );
  });

  it('accepts a fallback that takes the same inputs', () => {
    const offline = defineStage({ ...ticketTriage.cards[2]!, name: 'draft_offline' });
    const draft = defineStage({ ...ticketTriage.cards[2]!, fallback: 'draft_offline', taskQueue: 'handrail-model' });
    expect(checkStageRegistry([...replace(draft), offline], ENTRY)).toEqual([]);
  });
});
