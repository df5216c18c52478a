/**
 * ticket-hub: the fan-out definition (disjoint partitions, worker specialists) and its stage work
 * on a real store — account's history, and brief, judge and writeback on a merged package built
 * by hand the way the rail merges (hub artifacts, branches in fan-out order, context.v1 last).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  MERGE_STAGE,
  MergedBranches,
  PipelineDefinitionError,
  SummaryMd,
  VerdictV1,
  checkPipeline,
  defineStage,
  definePipeline,
  lastSegment,
  reservationUsd,
  type HandoffV1,
  type PipelineSpec,
} from '../../../contracts';
import { AccountHistoryV1, ChunksV1, ReceiptV1 } from '../../../contracts/pipelines/ticket-artifacts';
import type { StageResult } from '../../../contracts/stages';
import { BUILT_IN_PIPELINES, ticketHub, ticketTriage } from '../../../contracts/pipelines';
import {
  ACCOUNT_HISTORY,
  CONTEXT,
  accountStage,
  briefStage,
  policyStage,
} from '../../../contracts/pipelines/ticket-hub';
import { intakeStage, judgeStage, writebackStage } from '../../../contracts/pipelines/ticket-triage';
import { builtInActivities, createActivities, type HandrailActivities } from '../../../activities/built-in';
import { writeArtifact } from '../../../activities/artifacts';
import { packageSha } from '../../../activities/stage';
import { ticketHubActivities } from '../../../activities/ticket-hub';
import { historyLine } from '../../../activities/ticket-hub/brief';
import { ticketTriageActivities } from '../../../activities/ticket-triage';
import { citedKeys } from '../../../activities/ticket-triage/summary-policy';
import { sampleJobRequest } from '../../../src/devtools/samples/tickets';
import type { ChatModel } from '../../../src/worker/model';
import type { Store } from '../../../src/worker/store';
import { stageCards } from '../../../src/worker/worker';
import { checkEmitted } from '../../../workflows/rail/invariants';
import { corpusStore, firstPackage, refundTicket, ticketRef } from '../stages/helpers';
import { ticketEntry } from '../../../contracts/pipelines/ticket-entry';

const hub = (change: Partial<PipelineSpec>): PipelineSpec => ({
  name: 'hub-variant',
  entry: ticketEntry,
  stages: ticketHub.cards,
  routes: ticketHub.routes,
  revisits: ticketHub.revisits,
  reviser: 'brief',
  ...change,
});
const refusal = (spec: PipelineSpec): PipelineDefinitionError => {
  try {
    definePipeline(spec);
  } catch (error) {
    if (error instanceof PipelineDefinitionError) return error;
    throw error;
  }
  throw new Error(`${spec.name} loaded`);
};

describe('ticket-hub: the definition', () => {
  it('loads: intake fans out to policy and account, merged into context.v1 for brief; judge and writeback are ticket-triage’s', () => {
    expect(checkPipeline({ ...ticketHub, entry: ticketHub.entrySpec, stages: ticketHub.cards, versions: {} })).toEqual(
      [],
    );
    expect(ticketHub.routes.find((r) => r.after === 'intake.v1')).toMatchObject({
      fanOut: ['policy', 'account'],
      merge: CONTEXT,
    });
    for (const card of [intakeStage, judgeStage, writebackStage]) expect(ticketHub.get(card.name)).toBe(card);
    expect(ticketHub.cards.filter((c) => c.writes !== null).map((c) => c.name)).toEqual(['writeback']);
    expect([policyStage, accountStage, briefStage].map(reservationUsd)).toEqual([0.004, 0.002, 0.02]);
    expect(BUILT_IN_PIPELINES.map((p) => p.name)).toEqual([
      'ticket-triage',
      'support-routing',
      'ticket-hub',
      'research-brief',
    ]);
  });

  it('refuses specialists whose partitions overlap (account also emitting chunks.v1), naming both', () => {
    const greedy = defineStage({ ...accountStage, outputs: [ACCOUNT_HISTORY, 'chunks.v1'] });
    const error = refusal(hub({ stages: ticketHub.cards.map((c) => (c.name === 'account' ? greedy : c)) }));
    expect(error.problems).toEqual([
      `fan-out after intake.v1: "policy" and "account" both own chunks.v1; the specialists' partitions must be disjoint`,
    ]);
  });

  it('refuses a specialist without a worst case (worstCaseCostUsd), and a stage named merge in any pipeline', () => {
    const open = defineStage({ ...accountStage, worstCaseCostUsd: undefined });
    expect(refusal(hub({ stages: ticketHub.cards.map((c) => (c.name === 'account' ? open : c)) })).problems).toEqual([
      'fan-out after intake.v1: specialist "account" declares no worstCaseCostUsd; a specialist that runs beside others is reserved and charged at most its worst case',
    ]);
    const merge = defineStage({ ...intakeStage, name: 'merge' });
    const serial = {
      name: 'with-merge',
      entry: ticketEntry,
      stages: ticketTriage.cards.map((c) => (c.name === 'intake' ? merge : c)),
      routes: ticketTriage.routes.map((r) => ('to' in r && r.to === 'intake' ? { ...r, to: 'merge' } : r)),
      revisits: ticketTriage.revisits,
    };
    expect(() => definePipeline(serial)).toThrow(/stage "merge" is the rail's merge step; rename the stage/);
  });

  it('refuses a fan-out to a critic', () => {
    const screen = defineStage({
      name: 'screen',
      role: 'critic',
      accepts: ['intake.v1'],
      outputs: ['screening.v1'],
      criteria: ['risk screened'],
      nominalCostUsd: 0,
      worstCaseCostUsd: 0.001,
    });
    const routes = ticketHub.routes.map((r) => ('fanOut' in r ? { ...r, fanOut: ['policy', 'screen'] } : r));
    const error = refusal(hub({ stages: ticketHub.cards.map((c) => (c.name === 'account' ? screen : c)), routes }));
    expect(error.problems).toEqual([
      'fan-out after intake.v1: specialist "screen" is a critic; specialists that run at once must be workers',
    ]);
  });

  it('leaves one activity per stage name across the built-in pipelines: ticket-hub adds only its own stages', async () => {
    const store = await corpusStore();
    try {
      expect(Object.keys(ticketHubActivities({ store })).sort()).toEqual(['account', 'brief', 'policy']);
      const { cards, problems } = stageCards(BUILT_IN_PIPELINES);
      expect(problems).toEqual([]);
      const activities = builtInActivities({ store }) as Record<string, unknown>;
      expect(cards.filter((c) => typeof activities[c.name] !== 'function')).toEqual([]);
    } finally {
      await store.close();
    }
  });
});

describe('ticket-hub: the stages on a real store', () => {
  let store: Store;
  let activities: HandrailActivities;
  let hops = 0;
  beforeEach(async () => {
    store = await corpusStore();
    activities = createActivities({ store });
    hops = 0;
  });
  afterEach(async () => {
    await store.close();
  });

  type Stage = 'intake' | 'policy' | 'account' | 'brief' | 'judge' | 'writeback';
  /** Delivers as the rail would (one key per hop) and holds the result to the rail's invariants. */
  async function deliver(stage: Stage, pkg: HandoffV1): Promise<StageResult> {
    const result = await activities[stage]({ stage, package: pkg, delivery_key: `${pkg.job_id}:${stage}:${hops++}` });
    const card = ticketHub.get(stage)!;
    expect(
      checkEmitted({
        delivered: pkg,
        emitted: result.package,
        artifact: result.artifact,
        body: result.body,
        costUsd: result.cost_usd,
        card,
      }),
    ).toEqual([]);
    return result;
  }

  const earlier = async (job: string, ticket_id: string, customer_id: string, status: string, note: string) => {
    await store.patchCrmOnce(`${job}:writeback:receipt.v1`, { ticket_id, customer_id, status, note });
    // Distinct change times: the history is ordered by them.
    await new Promise((resolve) => setTimeout(resolve, 5));
  };
  /** cus_9's earlier tickets, another customer's, and the ticket in hand already in the CRM (a re-run). */
  async function seedCrm(current: string): Promise<void> {
    await earlier(
      'job_old1',
      'tkt_100',
      'cus_9',
      'triaged',
      '## Triage summary: ticket tkt_100\n\n> How do I export my invoices?\n\n- Use Settings → Export [export-your-data.1]',
    );
    await earlier(
      'job_old2',
      'tkt_101',
      'cus_9',
      'needs_human',
      '## Triage summary: ticket tkt_101\n\n> My card was declined twice.',
    );
    await earlier('job_old3', 'tkt_200', 'cus_other', 'triaged', 'Someone else entirely.');
    await earlier('job_old4', current, 'cus_9', 'triaged', 'This very ticket, written by an earlier run.');
  }

  /** The package the rail hands on after the fan-out: the hub's artifacts, each branch's in fan-out
   * order, then the merge (newest); the branches' tools and the last branch's log ref. */
  async function merged(
    hubResult: StageResult,
    branches: { stage: string; result: StageResult }[],
  ): Promise<{ pkg: HandoffV1; merge: StageResult }> {
    const body: MergedBranches = {
      after: 'intake.v1',
      branches: branches.map((b) => ({ stage: b.stage, artifact: b.result.artifact })),
    };
    const context = await writeArtifact(store, CONTEXT, MergedBranches, body);
    const base = hubResult.package;
    const pkg: HandoffV1 = {
      ...branches.at(-1)!.result.package,
      artifacts: [...base.artifacts, ...branches.map((b) => b.result.artifact), context],
      tools_tried: [
        ...base.tools_tried,
        ...branches.flatMap((b) => b.result.package.tools_tried.slice(base.tools_tried.length)),
      ],
    };
    return { pkg, merge: { package: pkg, artifact: context, cost_usd: 0, body } };
  }

  /** The rail's record of its merge, under `job_id:merge:<type>` (what writeback's provenance reads). */
  const recordMerge = (merge: StageResult) =>
    store.recordStageCompletion(`${merge.package.job_id}:${MERGE_STAGE}:${CONTEXT}`, merge, {
      job_id: merge.package.job_id,
      stage: MERGE_STAGE,
      delivery_sha: packageSha(merge.package),
      package_sha: packageSha(merge.package),
    });

  /** intake, then policy and account on the same package (the fan-out), then the hand-made merge. */
  async function throughMerge(ticket: object, jobId: string) {
    const intake = await deliver('intake', firstPackage(ticketRef(ticket), { job_id: jobId }));
    const [policy, account] = await Promise.all([
      deliver('policy', intake.package),
      deliver('account', intake.package),
    ]);
    const { pkg, merge } = await merged(intake, [
      { stage: 'policy', result: policy },
      { stage: 'account', result: account },
    ]);
    return { intake, policy, account, pkg, merge };
  }

  it("account returns the customer's earlier tickets, newest first, and not the ticket in hand", async () => {
    await seedCrm(refundTicket.id);
    const intake = await deliver('intake', firstPackage(ticketRef(refundTicket)));
    const account = await deliver('account', intake.package);
    expect(account.artifact.type).toBe(ACCOUNT_HISTORY);
    const history = AccountHistoryV1.parse(account.body);
    expect(history).toMatchObject({ customer_id: 'cus_9', count: 2, more: false });
    expect(history.tickets.map((t) => [t.ticket_id, t.status])).toEqual([
      ['tkt_101', 'needs_human'],
      ['tkt_100', 'triaged'],
    ]);
    expect(history.tickets[1]!.note_excerpt).toBe(
      '## Triage summary: ticket tkt_100 > How do I export my invoices? - Use Settings → Export [export-your-data.1]',
    );
    expect(account.package.tools_tried.at(-1)).toEqual({ name: 'crm.read', ok: true });
    expect(account.cost_usd).toBe(accountStage.nominalCostUsd);
    // Its own summary segment, appended to intake's.
    expect(lastSegment(account.package.summary)).toBe(
      'hop 1 account → account_history.v1: 2 earlier tickets of customer cus_9: tkt_101 needs_human, tkt_100 triaged',
    );
    expect(account.package.summary!.startsWith(`${intake.package.summary!}\n---hop---\n`)).toBe(true);
  });

  it('account asks a configured model what the earlier tickets have in common, and pays what the model cost; with no history it asks nothing', async () => {
    await seedCrm(refundTicket.id);
    const asked: string[] = [];
    const model: ChatModel = {
      model: 'fake',
      complete: async (messages) => {
        asked.push(messages.map((m) => m.content).join('\n'));
        return {
          text: 'Both are [billing] questions.',
          cost_usd: 0.0015,
          usage: { prompt_tokens: 90, completion_tokens: 8 },
        };
      },
    };
    activities = createActivities({ store, model });
    const intake = await deliver('intake', firstPackage(ticketRef(refundTicket)));
    const account = await deliver('account', intake.package);
    expect(asked).toHaveLength(1);
    expect(asked[0]).toContain('tkt_101 needs_human');
    expect(AccountHistoryV1.parse(account.body).pattern).toBe('Both are [billing] questions.');
    expect(account.cost_usd).toBe(0.0015);
    // The brief names the pattern without brackets (the judge reads brackets as citations).
    expect(historyLine(AccountHistoryV1.parse(account.body))).toMatch(/ Both are billing questions\.$/);

    const lone = await deliver(
      'intake',
      firstPackage(ticketRef({ ...refundTicket, id: 'tkt_lone', customer_id: 'cus_new' }), { job_id: 'job_lone' }),
    );
    await deliver('account', lone.package);
    expect(asked).toHaveLength(1);
  });

  it('account says so when the customer has no earlier ticket', async () => {
    const intake = await deliver('intake', firstPackage(ticketRef({ ...refundTicket, customer_id: 'cus_new' })));
    const account = await deliver('account', intake.package);
    expect(AccountHistoryV1.parse(account.body)).toEqual({
      customer_id: 'cus_new',
      tickets: [],
      count: 0,
      more: false,
    });
    expect(lastSegment(account.package.summary)).toBe(
      'hop 1 account → account_history.v1: no earlier tickets of customer cus_new',
    );
  });

  it('brief drafts from the merged context: it cites the policy chunks and names the earlier tickets; the judge passes it and writeback writes it', async () => {
    const sample = sampleJobRequest('job_hub').ticket;
    await seedCrm(sample.id);
    const { policy, pkg, merge } = await throughMerge(sample, 'job_hub');
    expect(pkg.artifacts.map((a) => a.type)).toEqual([
      'ticket.raw',
      'intake.v1',
      'chunks.v1',
      ACCOUNT_HISTORY,
      CONTEXT,
    ]);

    expect(lastSegment(policy.package.summary)).toMatch(/^hop 1 policy → chunks\.v1: \d chunks?: [a-z-]+\.\d/);
    const brief = await deliver('brief', pkg);
    const summary = SummaryMd.parse(brief.body);
    expect(lastSegment(brief.package.summary)).toBe(
      `hop 1 brief → summary_md: draft revision 0 (offline, ${summary.markdown.length} characters) citing ${summary.cited_keys.join(', ')}`,
    );
    const keys = ChunksV1.parse(policy.body).chunks.map((c) => c.key);
    expect(summary.cited_keys.length).toBeGreaterThan(0);
    expect(summary.cited_keys.every((k) => keys.includes(k))).toBe(true);
    expect(summary.cited_keys).toEqual(citedKeys(summary.markdown));
    expect(summary.markdown).toMatch(
      /^\*\*Account:\*\* customer cus_9 has 2 earlier tickets: tkt_101 \(needs_human, \d{4}-\d\d-\d\d\), tkt_100 \(triaged, \d{4}-\d\d-\d\d\)\.$/m,
    );
    // The earlier note's citation belongs to another job: the brief does not carry it over.
    expect(summary.cited_keys).not.toContain('export-your-data.1');

    // The judge finds the chunks by type, though the account history and the merge came after them.
    const judge = await deliver('judge', brief.package);
    expect(VerdictV1.parse(judge.body)).toMatchObject({ verdict: 'pass', failures: [] });

    // writeback (ticket-triage's activity) takes the hub's evidence, the rail's merge record included.
    await expect(deliver('writeback', judge.package)).rejects.toMatchObject({
      type: 'ArtifactInvalid',
      message: expect.stringMatching(/context\.v1 .* was not recorded for job job_hub/),
    });
    await recordMerge(merge);
    const receipt = ReceiptV1.parse((await deliver('writeback', judge.package)).body);
    expect(receipt).toMatchObject({
      idempotency_key: 'job_hub:writeback:receipt.v1',
      ticket_id: sample.id,
      status: 'updated',
    });
    expect((await store.getCrmTicket(sample.id))?.note).toBe(summary.markdown);
  });

  it('brief revises from a failing verdict, the merge still on the package, and the revision passes', async () => {
    const { pkg } = await throughMerge(refundTicket, 'job_rev');
    const first = await deliver('brief', pkg);
    // A rejected draft on the package, judged too long: what the fail route sends back to brief.
    const long = await writeArtifact(store, 'summary_md', SummaryMd, {
      markdown: `${'Too long. '.repeat(250)} [refund-policy.2]`,
      cited_keys: ['refund-policy.2'],
    });
    const failed = await deliver('judge', { ...first.package, artifacts: [...first.package.artifacts, long] });
    expect(failed.package.evaluator.last_verdict).toBe('fail');
    const revision = await deliver('brief', failed.package);
    const markdown = SummaryMd.parse(revision.body).markdown;
    expect(markdown).toMatch(/^_Revision 2: addresses too_long\b/m);
    expect(markdown).toContain('**Account:** customer cus_9 has no earlier tickets.');
    expect(VerdictV1.parse((await deliver('judge', revision.package)).body).verdict).toBe('pass');
  });

  it('a writeback told of ticket-hub takes its evidence; one serving ticket-triage alone refuses it', async () => {
    const { pkg, merge } = await throughMerge(refundTicket, 'job_mix');
    await recordMerge(merge);
    const judge = await deliver('judge', (await deliver('brief', pkg)).package);
    const work = (n: number) => ({
      stage: 'writeback' as const,
      package: judge.package,
      delivery_key: `job_mix:writeback:${n}`,
    });
    await expect(ticketTriageActivities({ store }).writeback(work(98))).rejects.toMatchObject({
      type: 'ArtifactInvalid',
      message: expect.stringMatching(/chunks\.v1 .* was not recorded for job job_mix by a stage of this pipeline/),
    });
    expect(await store.listWrites('job_mix')).toEqual([]);
    await expect(ticketTriageActivities({ store }, [ticketHub]).writeback(work(99))).resolves.toMatchObject({
      artifact: { type: 'receipt.v1' },
    });
  });
});
