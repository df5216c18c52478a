/** Builders for stage tests: a first package carrying a raw ticket, and a relay that plays the rail. */
import { expect } from 'vitest';
import { snapshotOf, type Artifact, type HandoffV1 } from '../../../contracts';
import type { StageResult } from '../../../contracts/stages';
import { ticketTriage } from '../../../contracts/pipelines/ticket-triage';
import { checkEmitted } from '../../../workflows/rail/invariants';
import type { HandrailActivities } from '../../../activities/built-in';
import { loadHelpCenter } from '../../../src/worker/corpus';
import { openStore, type Store } from '../../../src/worker/store';

export const TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

export const refundTicket = {
  id: 'tkt_18422',
  customer_id: 'cus_9',
  subject: 'Refund for annual plan',
  body: 'Hi, I renewed the annual plan last week by mistake. How do I get a refund for my annual plan? Invoice INV-2201.',
};

export function ticketRef(ticket: unknown, mediaType = 'application/json'): Artifact {
  const text = typeof ticket === 'string' ? ticket : JSON.stringify(ticket);
  return { type: 'ticket.raw', uri: `data:${mediaType};base64,${Buffer.from(text, 'utf8').toString('base64')}` };
}

export function firstPackage(ticket: Artifact, overrides: Partial<HandoffV1> = {}): HandoffV1 {
  return {
    schema: 'handoff.v1',
    job_id: 'job_1',
    goal: 'Draft internal triage summary; do not send to customer',
    constraints: ['no refund promises', 'cite help center or no_match'],
    artifacts: [ticket],
    open_questions: [],
    tools_tried: [],
    evaluator: { last_verdict: 'none', failures: [] },
    budget: { usd_remaining: 1.2, revisions_remaining: 2 },
    memory_refs: [],
    trace: { traceparent: TRACEPARENT },
    hop: { from: 'client', to: 'intake', reason: 'new job', count: 1, chain: ['client'] },
    ...overrides,
  };
}

export async function corpusStore(): Promise<Store> {
  const store = await openStore({ sqlitePath: ':memory:' });
  await loadHelpCenter(store);
  return store;
}

type StageActivity = 'intake' | 'retrieve' | 'draft' | 'judge' | 'writeback';

/** Plays the rail's part minimally: one delivery key per hop, and the emitted package travels on. */
export class Relay {
  private hops = 0;
  /** `snapshots`: address each delivery as the rail does (`context_ref`), so stages store it and may fold behind it. */
  constructor(
    private readonly activities: HandrailActivities,
    private readonly options: { snapshots?: boolean } = {},
  ) {}

  async run(stage: StageActivity, sent: HandoffV1): Promise<StageResult> {
    const pkg = this.options.snapshots ? { ...sent, context_ref: snapshotOf(sent.job_id, sent).uri } : sent;
    const result = await this.activities[stage]({
      stage,
      package: pkg,
      delivery_key: `${pkg.job_id}:${stage}:${this.hops++}`,
    });
    expectRailFieldsKept(pkg, result, stage);
    return result;
  }
}

/** The rail's own invariant check on the emitted package must find nothing to object to. */
export function expectRailFieldsKept(before: HandoffV1, result: StageResult, stage: string): void {
  const card = ticketTriage.get(stage);
  if (!card) throw new Error(`no card for ${stage}`);
  expect(
    checkEmitted({
      delivered: before,
      emitted: result.package,
      artifact: result.artifact,
      body: result.body,
      costUsd: result.cost_usd,
      card,
      ...(before.context_ref ? { foldSnapshot: before.context_ref } : {}),
    }),
  ).toEqual([]);
}
