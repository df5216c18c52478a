import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  SummaryMd,
  VerdictV1,
  failureCode,
  lastSegment,
  parseEntryUri,
  storedEntry,
  type HandoffV1,
} from '../../../contracts';
import { ChunksV1, NoHitV1, ReceiptV1 } from '../../../contracts/pipelines/ticket-artifacts';
import type { StageResult } from '../../../contracts/stages';
import { createActivities, type HandrailActivities } from '../../../activities/built-in';
import { writeArtifact } from '../../../activities/artifacts';
import { writeCrmNote } from '../../../activities/ticket-triage/crm';
import { writebackStage } from '../../../contracts/pipelines/ticket-triage';
import { judgeSummary } from '../../../activities/ticket-triage/rubric';
import { citedKeys, refundPromise } from '../../../activities/ticket-triage/summary-policy';
import type { Store } from '../../../src/worker/store';
import { Relay, corpusStore, firstPackage, refundTicket, ticketRef } from './helpers';

let store: Store;
let activities: HandrailActivities;
let relay: Relay;
beforeEach(async () => {
  store = await corpusStore();
  activities = createActivities({ store });
  relay = new Relay(activities);
});
afterEach(async () => {
  await store.close();
});

async function nonRetryable(promise: Promise<unknown>, type: string): Promise<ApplicationFailure> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ApplicationFailure);
  expect((error as ApplicationFailure).type).toBe(type);
  expect((error as ApplicationFailure).nonRetryable).toBe(true);
  return error as ApplicationFailure;
}

/** intake → retrieve → draft → judge for one ticket. */
async function throughJudge(ticket: object = refundTicket) {
  const intake = await relay.run('intake', firstPackage(ticketRef(ticket)));
  const retrieve = await relay.run('retrieve', intake.package);
  const draft = await relay.run('draft', retrieve.package);
  const judge = await relay.run('judge', draft.package);
  return { intake, retrieve, draft, judge };
}

/** The package after judge with the newest summary replaced by `markdown` and re-judged. */
async function judgeMarkdown(markdown: string, after: StageResult, constraints?: string[]) {
  const artifact = await writeArtifact(store, 'summary_md', SummaryMd, { markdown, cited_keys: citedKeys(markdown) });
  const pkg: HandoffV1 = {
    ...after.package,
    artifacts: [...after.package.artifacts, artifact],
    ...(constraints ? { constraints } : {}),
  };
  return relay.run('judge', pkg);
}

describe('retrieve', () => {
  it('returns cited help-center chunks, best first, for a question the corpus covers', async () => {
    const { retrieve } = await throughJudge();
    const body = ChunksV1.parse(retrieve.body);
    expect(retrieve.artifact.type).toBe('chunks.v1');
    expect(body.query).toBe('How do I get a refund for my annual plan?');
    expect(body.chunks[0]?.key).toMatch(/^refund-policy\.\d$/);
    expect(body.chunks.length).toBeLessThanOrEqual(4);
    expect(retrieve.package.tools_tried.at(-1)).toEqual({ name: 'helpcenter.search', ok: true });
    expect(retrieve.cost_usd).toBe(0.002);
  });

  it('returns no_hit.v1 when nothing matches, and the pipeline still drafts and passes saying no_match', async () => {
    const { retrieve, draft, judge } = await throughJudge({
      ...refundTicket,
      subject: 'Weather',
      body: 'What is the weather like on Mars tomorrow?',
    });
    expect(retrieve.artifact.type).toBe('no_hit.v1');
    expect(NoHitV1.parse(retrieve.body).reason).toMatch(/no help-center article matches/);
    const summary = SummaryMd.parse(draft.body);
    expect(summary.markdown).toContain('no_match');
    expect(summary.cited_keys).toEqual([]);
    expect(lastSegment(retrieve.package.summary)).toMatch(
      /^hop 1 retrieve → no_hit\.v1: no hit: no help-center article matches: /,
    );
    expect(lastSegment(draft.package.summary)).toMatch(
      /^hop 1 draft → summary_md: draft revision 0 \(offline, \d+ characters\) citing nothing \(no_match\)$/,
    );
    expect(VerdictV1.parse(judge.body).verdict).toBe('pass');
  });

  it('emits no corpus text that breaks the refund-promise policy (the rail checks every output)', async () => {
    const { retrieve } = await throughJudge();
    expect(refundPromise(JSON.stringify(retrieve.body))).toBeNull();
  });
});

describe('draft', () => {
  it('writes a summary that cites only retrieved keys and never promises a refund', async () => {
    const { retrieve, draft } = await throughJudge();
    const summary = SummaryMd.parse(draft.body);
    const keys = ChunksV1.parse(retrieve.body).chunks.map((c) => c.key);
    expect(summary.cited_keys.length).toBeGreaterThan(0);
    expect(summary.cited_keys.every((k) => keys.includes(k))).toBe(true);
    expect(summary.cited_keys).toEqual(citedKeys(summary.markdown));
    expect(refundPromise(summary.markdown)).toBeNull();
    expect(draft.package.evaluator).toEqual({ last_verdict: 'none', failures: [] });
  });

  it('is deterministic offline: the same input gives the same artifact', async () => {
    const first = await throughJudge();
    const again = await new Relay(createActivities({ store })).run('draft', first.retrieve.package);
    expect(again.artifact).toEqual(first.draft.artifact);
  });

  it('revises from the judge’s failures, keeps the evaluator, and differs from every rejected draft', async () => {
    const { judge } = await throughJudge();
    // Two rejected drafts on the package; the judge failed the second for length.
    const rejected = await judgeMarkdown(`${'Too long. '.repeat(250)} [refund-policy.2]`, judge);
    expect(rejected.package.evaluator.last_verdict).toBe('fail');
    const revision = await relay.run('draft', rejected.package);
    expect(revision.package.evaluator).toEqual(rejected.package.evaluator);
    const rejectedUris = rejected.package.artifacts.filter((a) => a.type === 'summary_md').map((a) => a.uri);
    expect(rejectedUris).toHaveLength(2);
    expect(rejectedUris).not.toContain(revision.artifact.uri);
    const markdown = SummaryMd.parse(revision.body).markdown;
    expect(markdown).toMatch(/^_Revision 2: addresses too_long\b/m);
    expect(lastSegment(revision.package.summary)).toMatch(
      /^hop 1 draft → summary_md: draft revision 2 \(offline, \d+ characters\) citing refund-policy\.\d/,
    );
    expect(VerdictV1.parse((await relay.run('judge', revision.package)).body).verdict).toBe('pass');
  });

  it("a human's revise after a draft the rail refused (so none is on the package) still changes the draft", async () => {
    const { retrieve } = await throughJudge();
    const first = await relay.run('draft', retrieve.package);
    const asked = {
      ...retrieve.package,
      evaluator: { last_verdict: 'fail' as const, failures: ['human: say what billing checks first'] },
    };
    const revision = await relay.run('draft', asked);
    expect(revision.artifact.uri).not.toBe(first.artifact.uri);
    expect(SummaryMd.parse(revision.body).markdown).toMatch(/^_Revision 1: addresses human\b/m);
  });

  it("quotes the customer's question as a quotation, so a question that sounds like a promise is not the note's own", async () => {
    const ticket = { ...refundTicket, body: 'I was told on the phone. Your refund has been approved, right?' };
    const pkg = firstPackage(ticketRef(ticket), { constraints: ['no refund promises'] });
    const intake = await relay.run('intake', pkg);
    const retrieve = await relay.run('retrieve', intake.package);
    const draft = await relay.run('draft', retrieve.package);
    const markdown = SummaryMd.parse(draft.body).markdown;
    expect(markdown).toMatch(/^> .*refund has been approved/m);
    expect(refundPromise(markdown)).toBeNull();
  });
});

describe('judge', () => {
  it('passes the offline draft on every criterion and records the verdict on the evaluator', async () => {
    const { judge, draft } = await throughJudge();
    const verdict = VerdictV1.parse(judge.body);
    expect(verdict).toMatchObject({
      verdict: 'pass',
      failures: [],
      scores: { citations: 1, policy: 1, length: 1, answers_question: 1 },
    });
    expect(verdict.summary_hash).toBe(draft.artifact.hash);
    expect(judge.package.evaluator).toEqual({ last_verdict: 'pass', failures: [] });
    expect(judge.package.tools_tried).toEqual(draft.package.tools_tried);
  });

  it.each([
    [
      'a cited key that was not retrieved',
      'The refund policy covers annual plans and refunds in detail [refund-policy.2] and also [api-keys.9].',
      /^citation_unknown: api-keys\.9/,
    ],
    [
      'no citation at all',
      'Annual plan refunds follow the refund policy; billing reviews each request and answers the customer.',
      /^citation_missing/,
    ],
    [
      'a refund promise',
      'Annual plan: we will refund the customer in full today, no questions asked [refund-policy.2].',
      /^refund_promise: promises a refund/,
    ],
    ['a summary that is too short', 'Refund annual plan [refund-policy.2].', /^too_short/],
    [
      'a summary off the question',
      'Shipping labels print in 4x6 format for thermal printers; check paper size [refund-policy.3].',
      /^off_topic/,
    ],
  ])('fails %s', async (_what, markdown, failure) => {
    const { judge } = await throughJudge();
    const result = await judgeMarkdown(markdown, judge);
    const verdict = VerdictV1.parse(result.body);
    expect(verdict.verdict).toBe('fail');
    expect(verdict.failures.some((f) => failure.test(f))).toBe(true);
    expect(result.package.evaluator).toEqual({ last_verdict: 'fail', failures: verdict.failures });
    // The judge's summary segment names the failures by their codes.
    expect(lastSegment(result.package.summary)).toBe(
      `hop 1 judge → verdict.v1: verdict fail: ${[...new Set(verdict.failures.map(failureCode))].join(', ')}`,
    );
  });

  it('fails a no_hit summary that does not say no_match', () => {
    const verdict = judgeSummary({
      summary: {
        markdown: 'The customer asks something the help center may cover; answer from experience. '.repeat(2),
        cited_keys: [],
      },
      intake: {
        ticket_id: 't',
        customer_id: 'c',
        question: 'Mars weather?',
        language: 'en',
        intent: 'other',
        risk: 'low',
        sentiment: 'neutral',
        open_questions: [],
      },
      retrieval: { kind: 'no_hit', reason: 'no help-center article matches: mars weather' },
      constraints: ['cite help center or no_match'],
    });
    expect(verdict.verdict).toBe('fail');
    expect(verdict.failures).toContain(
      'no_match_missing: retrieval found nothing, and the summary does not say no_match',
    );
  });

  it('issues a new verdict artifact for each judged draft, even with identical failures', async () => {
    const { judge } = await throughJudge();
    const a = await judgeMarkdown('Refund annual plan [refund-policy.2].', judge);
    const b = await judgeMarkdown('Refund annual plan [refund-policy.1].', a);
    expect(VerdictV1.parse(a.body).failures).toEqual(VerdictV1.parse(b.body).failures);
    expect(b.artifact.uri).not.toBe(a.artifact.uri);
  });
});

describe('writeback', () => {
  it('patches the CRM once under job_id:writeback:receipt.v1 and returns receipt.v1', async () => {
    const { judge, intake } = await throughJudge();
    const result = await relay.run('writeback', judge.package);
    const receipt = ReceiptV1.parse(result.body);
    expect(receipt).toMatchObject({
      idempotency_key: 'job_1:writeback:receipt.v1',
      system: 'crm',
      ticket_id: 'tkt_18422',
      status: 'created',
    });
    expect(result.package.tools_tried.at(-1)).toEqual({ name: 'crm.patch', ok: true });
    const record = await store.getCrmTicket('tkt_18422');
    expect(record).toMatchObject({ customer_id: 'cus_9', status: 'triaged', revision: 1 });
    expect(record?.note).toContain('[refund-policy.');
    expect(intake.package.job_id).toBe('job_1');
  });

  it('refuses without a passing verdict (second gate behind the rail), writing nothing', async () => {
    const { judge } = await throughJudge();
    const failed = await judgeMarkdown('Refund annual plan [refund-policy.2].', judge);
    // That draft was written straight to the store, not recorded by this job's drafter.
    const error = await nonRetryable(relay.run('writeback', failed.package), 'ArtifactInvalid');
    expect(error.message).toMatch(/summary_md .* was not recorded for job job_1/);
    // A package that claims pass over a failing verdict artifact is refused all the same.
    const forged = { ...failed.package, evaluator: { last_verdict: 'pass' as const, failures: [] } };
    await nonRetryable(relay.run('writeback', forged), 'ArtifactInvalid');
    expect(await store.listWrites('job_1')).toEqual([]);
  });

  it('refuses a pass that judged an older draft than the newest one', async () => {
    const { judge } = await throughJudge();
    const newer = await writeArtifact(store, 'summary_md', SummaryMd, {
      markdown: 'We will refund you in full. [refund-policy.2]',
      cited_keys: [],
    });
    const [ticket, ...rest] = judge.package.artifacts;
    const verdict = rest.pop();
    const pkg: HandoffV1 = { ...judge.package, artifacts: [ticket!, ...rest, newer, verdict!] };
    // The newer draft was never recorded for the job, so the pass cannot cover it.
    const error = await nonRetryable(relay.run('writeback', pkg), 'ArtifactInvalid');
    expect(error.message).toMatch(/summary_md .* was not recorded for job job_1/);
  });

  it('under "redact personal data": the draft masks the ticket\'s email, phone and card number, the judge passes it and the CRM note is the masked summary', async () => {
    // No "?" in the body: the subject is the question the summary quotes (intake splits sentences at dots).
    const subject = 'Refund for annual plan, card 4111 1111 1111 1111 (jane.doe@example.com, (415) 555-0132)';
    const body =
      'I renewed the annual plan by mistake and want a refund to card 4111 1111 1111 1111. Reach me at jane.doe@example.com or (415) 555-0132. Invoice INV-2201.';
    const pkg = firstPackage(ticketRef({ ...refundTicket, subject, body }), {
      constraints: ['no refund promises', 'redact personal data'],
    });
    const intake = await relay.run('intake', pkg);
    const retrieve = await relay.run('retrieve', intake.package);
    const draft = await relay.run('draft', retrieve.package);
    const judge = await relay.run('judge', draft.package);
    const writeback = await relay.run('writeback', judge.package);
    const summary = SummaryMd.parse(draft.body).markdown;
    expect(summary).toContain('> Refund for annual plan, card [card] ([email], [phone])');
    expect(VerdictV1.parse(judge.body)).toMatchObject({ verdict: 'pass', failures: [] });
    expect(ReceiptV1.parse(writeback.body).status).toBe('created');
    const note = (await store.getCrmTicket('tkt_18422'))?.note;
    expect(note).toBe(summary);
    for (const text of [summary, note ?? '', writeback.package.summary ?? ''])
      expect(text).not.toMatch(/4111|jane\.doe|555-0132/);
  });

  it('the judge fails, and the writer refuses, a note that still holds personal data under "redact personal data", naming it obscured', async () => {
    const { judge, draft } = await throughJudge();
    const leaky = `${SummaryMd.parse(draft.body).markdown}\n\nCustomer email: jane.doe@example.com`;
    const failed = await judgeMarkdown(leaky, judge, ['redact personal data']);
    expect(VerdictV1.parse(failed.body).failures).toEqual([
      'constraint_breach: redact_personal_data: leaves personal data unmasked: email j***@e***.com',
    ]);
    const patch = { ticket_id: 'tkt_18422', customer_id: 'cus_9', status: 'triaged', note: leaky };
    await expect(
      writeCrmNote(store, writebackStage, { job_id: 'job_1', constraints: ['redact PII'] }, patch),
    ).rejects.toMatchObject({
      type: 'VerdictNotPassing',
      message: 'writeback refuses to write: redact_personal_data: leaves personal data unmasked: email j***@e***.com',
    });
    expect(await store.listWrites('job_1')).toEqual([]);
  });

  it('given the same delivery 5 times concurrently, writes one row and returns one receipt', async () => {
    const { judge } = await throughJudge();
    const work = { stage: 'writeback' as const, package: judge.package, delivery_key: 'job_1:writeback:4' };
    const results = await Promise.all(Array.from({ length: 5 }, () => activities.writeback(work)));
    expect(new Set(results.map((r) => JSON.stringify(r))).size).toBe(1);
    expect(await store.listWrites('job_1')).toHaveLength(1);
    expect((await store.getCrmTicket('tkt_18422'))?.revision).toBe(1);
    expect(await activities.priorDelivery({ delivery_key: 'job_1:writeback:4' })).toEqual(results[0]);
  });

  it('after a crash between the write and the report, the retry returns the first receipt and writes nothing new', async () => {
    const { judge } = await throughJudge();
    // The worker dies after the CRM write committed, before the stage result is recorded.
    const crashing: Store = Object.create(store) as Store;
    crashing.recordStageCompletion = async () => {
      throw new Error('worker crashed');
    };
    const work = { stage: 'writeback' as const, package: judge.package, delivery_key: 'job_1:writeback:4' };
    await expect(createActivities({ store: crashing }).writeback(work)).rejects.toThrow('worker crashed');
    const firstReceipt = (await store.listWrites('job_1'))[0];
    expect(firstReceipt).toBeDefined();

    const retried = await activities.writeback(work);
    expect(retried.body).toMatchObject({
      idempotency_key: firstReceipt!.write_key,
      system: 'crm',
      record_id: firstReceipt!.reference,
      note_hash: firstReceipt!.payload_hash,
    });
    // The job's result carries the generic receipt: the write the crashed attempt made, found existing.
    expect(retried.receipt).toEqual({ ...firstReceipt, status: 'existing' });
    // A duplicate delivery under a new hop key (the rail re-sent it) also gets the first receipt.
    const duplicate = await activities.writeback({ ...work, delivery_key: 'job_1:writeback:6' });
    expect(duplicate.artifact).toEqual(retried.artifact);
    expect(await store.listWrites('job_1')).toEqual([firstReceipt]);
    expect((await store.getCrmTicket('tkt_18422'))?.revision).toBe(1);
  });
});

describe('delivery once', () => {
  it('returns the recorded result for a repeated delivery key without working again', async () => {
    const pkg = firstPackage(ticketRef(refundTicket));
    const work = { stage: 'intake' as const, package: pkg, delivery_key: 'job_1:intake:0' };
    const first = await activities.intake(work);
    // A different package under the same key never gets the recorded result as its own: it comes
    // back marked as another package's, and the rail refuses it (rejected_conflict).
    const again = await activities.intake({
      ...work,
      package: firstPackage(ticketRef({ ...refundTicket, id: 'tkt_other' })),
    });
    expect(again).toEqual({ ...first, recorded_by_other: 'different' });
    expect(await activities.priorDelivery({ delivery_key: 'job_1:intake:0' })).toEqual(first);
    expect(await activities.priorDelivery({ delivery_key: 'job_1:intake:9' })).toBeNull();
  });

  it('tells twin deliveries of the same bytes apart by the activity that got them: the second is marked the same package', async () => {
    const pkg = firstPackage(ticketRef(refundTicket));
    const work = { stage: 'intake' as const, package: pkg, delivery_key: 'job_1:intake:0' };
    const by = (workflowId: string) =>
      new MockActivityEnvironment({
        workflowExecution: { workflowId, runId: 'run' },
        activityId: '1',
        workflowType: 'handoffJob',
      });
    const first = (await by('wf-a').run(activities.intake, work)) as StageResult;
    // Same workflow, run and activity: a retry of the same delivery gets the record as is.
    expect(await by('wf-a').run(activities.intake, work)).toEqual(first);
    // Another workflow delivering identical bytes (even to the millisecond) is another delivery.
    expect(await by('wf-b').run(activities.intake, work)).toEqual({ ...first, recorded_by_other: 'same' });
  });

  describe('the entry by reference (contracts/entry.ts)', () => {
    const text = JSON.stringify(refundTicket);
    const inline = {
      type: 'ticket.raw',
      uri: `data:application/json,${encodeURIComponent(text)}`,
      schema: 'ticket.raw',
      note: 'kept',
    };

    it('asked, the first stage stores the inline ticket and emits its job-scoped reference; not asked, it stays inline', async () => {
      const asked = (await activities.intake({
        stage: 'intake',
        package: firstPackage(inline),
        delivery_key: 'job_1:intake:0',
        store_entry: true,
      })) as StageResult;
      const entry = asked.package.artifacts[0]!;
      expect(entry).toEqual(storedEntry('job_1', inline, text));
      expect(await store.getContent(parseEntryUri(entry.uri)!.sha)).toBe(text);
      const notAsked = (await activities.intake({
        stage: 'intake',
        package: firstPackage(inline),
        delivery_key: 'job_1:intake:1',
      })) as StageResult;
      expect(notAsked.package.artifacts[0]).toEqual(inline);
      // A base64 entry cannot be checked by the rail, so it is not moved.
      const base64 = (await activities.intake({
        stage: 'intake',
        package: firstPackage(ticketRef(refundTicket)),
        delivery_key: 'job_1:intake:2',
        store_entry: true,
      })) as StageResult;
      expect(base64.package.artifacts[0]!.uri).toMatch(/^data:application\/json;base64,/);
    });

    it("a package carrying another job's entry under a recorded key is answered as another package's (the rail acks rejected_conflict), as the rail's lookup first answered it", async () => {
      const first = (await activities.intake({
        stage: 'intake',
        package: firstPackage(inline),
        delivery_key: 'job_1:intake:4',
      })) as StageResult;
      const foreign = storedEntry('job_2', inline, text);
      expect(
        await activities.intake({ stage: 'intake', package: firstPackage(foreign), delivery_key: 'job_1:intake:4' }),
      ).toEqual({ ...first, recorded_by_other: 'different' });
      await nonRetryable(
        activities.intake({ stage: 'intake', package: firstPackage(foreign), delivery_key: 'job_1:intake:5' }),
        'StageInputInvalid',
      );
    });

    it("refuses a package carrying another job's entry address, before reading it", async () => {
      const asked = (await activities.intake({
        stage: 'intake',
        package: firstPackage(inline),
        delivery_key: 'job_1:intake:3',
        store_entry: true,
      })) as StageResult;
      const theirs = { ...asked.package, job_id: 'job_2' };
      const error = await nonRetryable(
        activities.retrieve({ stage: 'retrieve', package: theirs, delivery_key: 'job_2:retrieve:1' }),
        'StageInputInvalid',
      );
      expect(error.message).toMatch(/is another job's entry, not job job_2's/);
    });
  });

  it('refuses a package whose newest artifact the stage does not take', async () => {
    const { intake } = await throughJudge();
    const error = await nonRetryable(
      activities.judge({ stage: 'judge', package: intake.package, delivery_key: 'k' }),
      'StageInputInvalid',
    );
    expect(error.message).toMatch(/"judge" takes summary_md, the package.s newest artifact is intake\.v1/);
  });

  it('refuses a stored artifact whose content does not match its address', async () => {
    const { intake } = await throughJudge();
    const tampered = { ...intake.package.artifacts[1]!, hash: `sha256:${'0'.repeat(64)}` };
    const pkg = { ...intake.package, artifacts: [intake.package.artifacts[0]!, tampered] };
    const error = await nonRetryable(
      activities.retrieve({ stage: 'retrieve', package: pkg, delivery_key: 'k' }),
      'ArtifactInvalid',
    );
    expect(error.message).toMatch(/does not match its address/);
  });
});
