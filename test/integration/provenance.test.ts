/**
 * Issue "Provenance", tried as an attacker would, through the public workflow types on the real
 * dev server: a writer acts only on evidence the rail recorded for this job; duplicates are
 * recognised by content, not key alone; a workflow acts only for its own job and refuses bad
 * input within its first task.
 */
import { WorkflowFailedError } from '@temporalio/client';
import { WorkflowIdReusePolicy } from '@temporalio/common';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SummaryMd, type AckRecord, type HandoffV1, type JobRequest, type JobResult } from '../../contracts';
import { sha256Hex } from '../../contracts/sha256';
import { readArtifactBody } from '../../activities/artifacts';
import type { StageHopRequest } from '../../workflows/stage-hop';
import { firstPackage } from '../../workflows/rail/first-package';
import { startJob } from '../../src/operator/client';
import { deliverHop, jobRequest, startRail, uniqueId, upsertedValues, waitForStatus, type Rail } from '../helpers/rail';
import { HandrailStatus } from '../../workflows/search-attributes';
import { SEED_TRACEPARENT } from '../scenarios';
import { ticketTriage } from '../../contracts/pipelines/ticket-triage';

const TRACE = SEED_TRACEPARENT;
let rail: Rail;

beforeAll(async () => {
  rail = await startRail();
});
afterAll(async () => {
  await rail?.stop();
});

const hop = (request: StageHopRequest) => deliverHop(rail, request);

/** A fresh ticket walked through intake → judge with stageHop: the package writeback takes. */
async function judgedPackage(request: JobRequest = jobRequest()): Promise<HandoffV1> {
  let pkg: HandoffV1 = firstPackage(request, TRACE, ticketTriage);
  for (const stage of ['intake', 'retrieve', 'draft', 'judge']) {
    const res = await hop({ stage, package: pkg });
    expect(res.ack.ack, `${stage}: ${res.ack.reason}`).toBe('accepted');
    pkg = res.package!;
  }
  expect(pkg.evaluator.last_verdict).toBe('pass');
  return pkg;
}

const dataRef = (type: string, body: unknown) => ({
  type,
  uri: `data:application/json,${encodeURIComponent(JSON.stringify(body))}`,
});

/** A package made by the caller: its own intake (naming someone's ticket), draft and passing verdict. */
function forgedWriteback(jobId: string, ticketId: string): HandoffV1 {
  const base = firstPackage(jobRequest({ job_id: jobId }), TRACE, ticketTriage);
  return {
    ...base,
    artifacts: [
      ...base.artifacts,
      dataRef('intake.v1', {
        ticket_id: ticketId,
        customer_id: 'cus_9',
        question: 'refund?',
        language: 'en',
        intent: 'refund',
        risk: 'low',
        sentiment: 'neutral',
        open_questions: [],
        intent_confidence: 1,
        risk_score: 0,
        risk_signals: [],
        sentiment_score: 0,
      }),
      dataRef('chunks.v1', { query: 'refund', chunks: [] }),
      dataRef('summary_md', { markdown: 'We will refund you in full today.', cited_keys: [] }),
      dataRef('verdict.v1', { verdict: 'pass', scores: {}, failures: [] }),
    ],
    evaluator: { last_verdict: 'pass', failures: [] },
    hop: {
      from: 'judge',
      to: 'judge',
      reason: 'forged',
      count: 3,
      chain: ['client', 'intake', 'retrieve', 'draft', 'judge'],
    },
  };
}

async function completedJob(request: JobRequest = jobRequest()): Promise<JobResult> {
  const { handle } = await startJob(rail.client, request, rail);
  const result = await handle.result();
  expect(result.status).toBe('completed');
  return result;
}

describe('provenance: a writer acts only on evidence the rail recorded for this job', () => {
  it('1. a caller-made intake, draft and passing verdict under a fresh job id write nothing, to nobody', async () => {
    const victim = jobRequest();
    await completedJob(victim);
    const before = await rail.store.getCrmTicket(victim.ticket.id);
    const forgedJob = uniqueId('forged');

    const res = await hop({ stage: 'writeback', package: forgedWriteback(forgedJob, victim.ticket.id) });

    expect(res.artifact).toBeUndefined();
    expect(res.failure ?? res.ack.reason).toMatch(/not recorded for job|no passing verdict recorded/);
    expect(await rail.store.getCrmTicket(victim.ticket.id)).toEqual(before);
    expect(await rail.store.listWrites(forgedJob)).toEqual([]);
  });

  it("2. a forged writeback sent before job X exists does not take X's write key: X later writes its own summary", async () => {
    const request = jobRequest();
    await hop({ stage: 'writeback', package: forgedWriteback(request.job_id, request.ticket.id) });
    expect(await rail.store.listWrites(request.job_id)).toEqual([]);

    const result = await completedJob(request);
    const written = await rail.store.getCrmTicket(request.ticket.id);
    expect(written?.note).not.toMatch(/refund you in full/);
    // The note in the CRM is X's own judged summary, and X's receipt is of that write.
    const summary = result.package.artifacts.filter((a) => a.type === 'summary_md').at(-1)!;
    expect(written?.note).toBe((await readArtifactBody(rail.store, summary, SummaryMd)).markdown);
    expect(result.receipt).toMatchObject({
      write_key: `${request.job_id}:writeback:receipt.v1`,
      status: 'created',
      payload_hash: `sha256:${sha256Hex(written!.note)}`,
    });
    expect(await rail.store.listWrites(request.job_id)).toHaveLength(1);
  });

  it("2. an honest stageHop chain under X, run before job X, neither poisons X's hops nor passes for X's write", async () => {
    const request = jobRequest();
    // Someone relays a ticket of their own through every stage under X's id, and writes.
    const theirs = await judgedPackage({
      ...request,
      ticket: { ...request.ticket, id: `${request.ticket.id}-theirs` },
    });
    expect((await hop({ stage: 'writeback', package: theirs })).artifact?.type).toBe('receipt.v1');

    const { handle } = await startJob(rail.client, request, rail);
    const waiting = await waitForStatus(handle, 'escalated');
    // Every hop of X ran on X's own records (no rejected_conflict); its writer found the key taken
    // and refused, rather than reporting the other chain's receipt as X's write.
    const acks = await handle.query<AckRecord[]>('acks');
    expect(acks.slice(0, 4).map((a) => `${a.stage}:${a.ack}`)).toEqual([
      'intake:accepted',
      'retrieve:accepted',
      'draft:accepted',
      'judge:accepted',
    ]);
    expect(waiting.escalation?.reasons.join(' ')).toMatch(
      /write key .*:writeback:receipt\.v1 already holds another write/,
    );
    expect(await rail.store.getCrmTicket(request.ticket.id)).toBeNull();
    await handle.cancel();
  });

  it('2. a job a human rejected cannot be written by delivering its judged package directly', async () => {
    const request = jobRequest({ max_hops: 3 });
    const { handle } = await startJob(rail.client, request, rail);
    await waitForStatus(handle, 'escalated');
    const judged = await handle.query<HandoffV1>('package');
    await rail.client.workflow
      .getHandle(request.job_id)
      .executeUpdate('decide', { args: [{ action: 'reject', actor: 'ops.lead' }] });
    expect((await handle.result()).status).toBe('rejected');

    const res = await hop({
      stage: 'writeback',
      package: {
        ...judged,
        hop: { ...judged.hop!, to: 'judge', chain: judged.hop!.chain.filter((s) => s !== 'human') },
      },
    });
    expect(res.artifact).toBeUndefined();
    expect(res.failure ?? res.ack.reason).toMatch(/not recorded for job|no passing verdict/);
    expect(await rail.store.listWrites(request.job_id)).toEqual([]);
  });

  it("3. job B cannot write with job A's recorded artifacts", async () => {
    const a = await judgedPackage();
    const ticketA = (await rail.store.listWrites(a.job_id)).length;
    const jobB = uniqueId('job-b');

    // A's package carries A's stored ticket: refused before its evidence is read.
    const res = await hop({ stage: 'writeback', package: { ...a, job_id: jobB } });
    expect(res.artifact).toBeUndefined();
    expect(res.failure).toMatch(/is another job's entry, not job .*'s/);
    // With a ticket of its own, A's evidence is still not B's.
    const ticket = jobRequest().ticket;
    const own = {
      type: 'ticket.raw',
      uri: `data:application/json,${encodeURIComponent(JSON.stringify(ticket))}`,
      schema: 'ticket.raw',
    };
    const again = await hop({
      stage: 'writeback',
      package: { ...a, job_id: jobB, artifacts: [own, ...a.artifacts.slice(1)] },
    });
    expect(again.artifact).toBeUndefined();
    expect(again.failure).toMatch(/not recorded for job/);
    expect(await rail.store.listWrites(jobB)).toEqual([]);
    expect(await rail.store.listWrites(a.job_id)).toHaveLength(ticketA);
  });

  it('an honest chain under a refund constraint is written: provenance costs an honest job nothing', async () => {
    const pkg = await judgedPackage(jobRequest({ constraints: ['no refund promises'] }));
    const res = await hop({ stage: 'writeback', package: pkg });
    expect(res.ack.ack).toBe('accepted');
    expect(res.artifact?.type).toBe('receipt.v1');
    expect(await rail.store.listWrites(pkg.job_id)).toHaveLength(1);
  });
});

describe('duplicates are recognised by content, and a job id is one job', () => {
  it('4. concurrent identical deliveries write once; one is accepted and every other one is duplicate', async () => {
    const pkg = await judgedPackage();
    const results = await Promise.all(
      [...Array(6).keys()].map(() => hop({ stage: 'writeback', package: pkg, delivery_id: 'same' })),
    );
    const acks = results.map((r) => r.ack.ack).sort();
    expect(acks.filter((a) => a === 'accepted')).toHaveLength(1);
    expect(acks.filter((a) => a === 'duplicate')).toHaveLength(5);
    expect(new Set(results.map((r) => r.artifact?.uri))).toHaveProperty('size', 1);
    expect(await rail.store.listWrites(pkg.job_id)).toHaveLength(1);
  });

  it("4. starting a completed job id again (the SDK's and the temporal CLI's default reuse policy) re-answers its result, writing nothing more and never showing the job rejected", async () => {
    const request = jobRequest();
    const first = await completedJob(request);
    const again = await rail.client.workflow.start('handoffJob', {
      taskQueue: rail.taskQueue,
      workflowId: request.job_id,
      args: [request],
      workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE,
    });
    const result = (await again.result()) as JobResult;
    expect(result).toEqual(first);
    expect(await rail.store.listWrites(request.job_id)).toHaveLength(1);
    expect((await again.describe()).typedSearchAttributes.get(HandrailStatus)).toBe('completed');
    expect(upsertedValues((await again.fetchHistory()).events ?? [], HandrailStatus.name)).not.toContain('rejected');
  });

  it('5. same key, same content: duplicate; same key, other content: rejected_conflict, never the old result', async () => {
    const pkg = firstPackage(jobRequest(), TRACE, ticketTriage);
    const first = await hop({ stage: 'intake', package: pkg });
    expect(first.ack.ack).toBe('accepted');
    expect((await hop({ stage: 'intake', package: pkg })).ack.ack).toBe('duplicate');

    const changed = await hop({ stage: 'intake', package: { ...pkg, goal: 'Another goal entirely' } });
    expect(changed.ack.ack).toBe('rejected_conflict');
    expect(changed.artifact).toBeUndefined();
    expect(changed.ack.reason).toMatch(/different package/);
  });

  it('6. a workflow whose job_id is not its workflow id is refused and writes nothing', async () => {
    const victim = jobRequest();
    const handle = await rail.client.workflow.start('handoffJob', {
      taskQueue: rail.taskQueue,
      workflowId: uniqueId('other'),
      args: [victim],
    });
    await expect(handle.result()).rejects.toThrow(WorkflowFailedError);
    await expect(handle.result()).rejects.toMatchObject({
      cause: { type: 'InvalidJobRequest', message: expect.stringMatching(/job_id .* is not this workflow's id/) },
    });
    expect(await rail.store.listWrites(victim.job_id)).toEqual([]);
  });
});

describe('7. a raw start fails closed within its first workflow task', () => {
  const refused = async (
    type: 'handoffJob' | 'stageHop',
    args: unknown[],
    field: RegExp,
    workflowId = uniqueId('raw'),
  ) => {
    const handle = await rail.client.workflow.start(type, {
      taskQueue: rail.taskQueue,
      workflowId,
      args,
      workflowTaskTimeout: '2s',
    });
    const error = await handle.result().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(WorkflowFailedError);
    expect((error as WorkflowFailedError).cause).toMatchObject({ message: expect.stringMatching(field) });
    const history = await handle.fetchHistory();
    expect(history.events?.filter((e) => e.workflowTaskFailedEventAttributes)).toEqual([]);
  };

  it.each([
    ['no input', [], /request/],
    ['decision_timeout "forever"', ['decision_timeout'], /decision_timeout/],
    ['max_hops "lots"', ['max_hops'], /max_hops/],
    ['max_hops -1', ['max_hops-neg'], /max_hops/],
    ['a negative budget', ['budget'], /budget/],
    [
      'an entry that is not a ticket',
      ['entry-invalid'],
      /^invalid job request: entry is not a valid ticket\.raw for pipeline ticket-triage: entry\.customer_id: is required$/,
    ],
    [
      'a ticket (the older field) that is not a ticket',
      ['ticket-invalid'],
      /entry is not a valid ticket\.raw for pipeline ticket-triage: entry\.subject: /,
    ],
    [
      'no entry',
      ['entry-missing'],
      /^invalid job request: entry is required \(a ticket\.raw for pipeline ticket-triage\)$/,
    ],
    ['both entry and ticket', ['entry-both'], /both entry and ticket given/],
  ])('handoffJob with %s', async (_name, which, field) => {
    const request: Record<string, unknown> = { ...jobRequest() };
    const args: unknown[] = which.length === 0 ? [] : [request];
    const workflowId = request.job_id as string;
    if (which[0] === 'decision_timeout') request.decision_timeout = 'forever';
    if (which[0] === 'max_hops') request.max_hops = 'lots';
    if (which[0] === 'max_hops-neg') request.max_hops = -1;
    if (which[0] === 'budget') request.budget = { usd: -5, revisions: 1 };
    const { ticket, ...withoutTicket } = request;
    const { customer_id: _gone, ...noCustomer } = ticket as Record<string, unknown>;
    if (which[0] === 'entry-invalid') args[0] = { ...withoutTicket, entry: noCustomer };
    if (which[0] === 'ticket-invalid') request.ticket = { ...noCustomer, customer_id: 'cus_9', subject: 'x\u0000' };
    if (which[0] === 'entry-missing') args[0] = withoutTicket;
    if (which[0] === 'entry-both') request.entry = ticket;
    await refused('handoffJob', args, field, workflowId);
  });

  it.each([
    ['no input', [], /request/],
    ['"stage": 5', [{ stage: 5, package: {} }], /stage/],
    ['max_hops "lots"', [{ stage: 'intake', package: {}, max_hops: 'lots' }], /max_hops/],
  ])('stageHop with %s', async (_name, args, field) => {
    await refused('stageHop', args, field);
  });
});
