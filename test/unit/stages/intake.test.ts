import { ApplicationFailure } from '@temporalio/common';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { IntakeV1 } from '../../../contracts/pipelines/ticket-artifacts';
import { createActivities } from '../../../activities/built-in';
import {
  assessRisk,
  classifyIntent,
  detectLanguage,
  scoreSentiment,
} from '../../../activities/ticket-triage/ticket-rules';
import { openStore, type Store } from '../../../src/worker/store';
import { artifactUri, canonicalJson, sha256Hex } from '../../../src/worker/store/content';
import { expectRailFieldsKept, firstPackage, refundTicket, ticketRef } from './helpers';

let store: Store;
beforeEach(async () => {
  store = await openStore({ sqlitePath: ':memory:' });
});
afterEach(async () => {
  await store.close();
});

const runIntake = (pkg = firstPackage(ticketRef(refundTicket))) =>
  createActivities({ store }).intake({ stage: 'intake', package: pkg, delivery_key: 'job_1:intake:1' });

async function failure(promise: Promise<unknown>): Promise<ApplicationFailure> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ApplicationFailure);
  expect((error as ApplicationFailure).nonRetryable).toBe(true);
  return error as ApplicationFailure;
}

describe('intake', () => {
  it('turns a JSON ticket into intake.v1 with ids, question, language and rule-based scores', async () => {
    const pkg = firstPackage(ticketRef(refundTicket));
    const result = await runIntake(pkg);
    expectRailFieldsKept(pkg, result, 'intake');
    const body = IntakeV1.parse(result.body);
    expect(body).toMatchObject({
      ticket_id: 'tkt_18422',
      customer_id: 'cus_9',
      question: 'How do I get a refund for my annual plan?',
      language: 'en',
      intent: 'refund',
      risk: 'low',
      sentiment: 'neutral',
      open_questions: [],
    });
    expect(body.risk_score).toBe(0.2);
    expect(result.artifact).toMatchObject({ type: 'intake.v1', schema: 'intake.v1' });
    expect(result.artifact.uri).toBe(artifactUri(sha256Hex(canonicalJson(body))));
    expect(result.cost_usd).toBe(0.001);
    expect(result.package.tools_tried).toEqual([{ name: 'tickets.read', ok: true }]);
    // The stage's own refs, then the job's log after this turn (the transcript stays in the store).
    expect(result.package.memory_refs.slice(0, 2)).toEqual(['customer_id:cus_9', 'ticket_id:tkt_18422']);
    expect(result.package.memory_refs[2]).toMatch(/^handrail:\/\/transcripts\/job_1\/[0-9a-f]{64}$/);
    expect(result.package.evaluator).toEqual(pkg.evaluator);
  });

  it('reads the plain-text email form, ids from the helpdesk headers', async () => {
    const email = [
      'From: Ana Ruiz <ana@example.com>',
      'Subject: Locked out',
      'X-Ticket-Id: tkt_77',
      'X-Customer-Id: cus_12',
      '',
      'I lost my phone with the authenticator app. How can I sign in without my 2FA codes?',
    ].join('\r\n');
    const body = IntakeV1.parse((await runIntake(firstPackage(ticketRef(email, 'text/plain')))).body);
    expect(body).toMatchObject({
      ticket_id: 'tkt_77',
      customer_id: 'cus_12',
      intent: 'account_access',
      channel: 'email',
    });
    expect(body.question).toBe('How can I sign in without my 2FA codes?');
  });

  it('fails closed on missing ids, lists them as open questions, and invents nothing', async () => {
    const pkg = firstPackage(ticketRef({ subject: 'Refund', body: 'Where is my refund?' }));
    const error = await failure(runIntake(pkg));
    expect(error.type).toBe('EntryFieldsMissing');
    const [details] = error.details as [{ open_questions: string[]; package: { open_questions: string[] } }];
    expect(details.open_questions).toEqual([
      'ticket_id missing: the ticket does not name one',
      'customer_id missing: the ticket does not name one',
    ]);
    expect(details.package.open_questions).toEqual(details.open_questions);
    expect(await createActivities({ store }).priorDelivery({ delivery_key: 'job_1:intake:1' })).toBeNull();
  });

  it('fails closed on an email without id headers, even when the body mentions something id-like', async () => {
    const email = 'Subject: help\n\nMy customer number is cus_55 and the ticket tkt_9. Can you help?';
    const error = await failure(runIntake(firstPackage(ticketRef(email, 'text/plain'))));
    expect(error.type).toBe('EntryFieldsMissing');
    expect(error.message).toMatch(/ticket_id missing.*customer_id missing/);
  });

  it('treats a malformed id as missing, not as something to repair', async () => {
    const error = await failure(runIntake(firstPackage(ticketRef({ ...refundTicket, id: 'tkt 1; DROP TABLE' }))));
    expect(error.message).toContain('ticket_id "tkt 1; DROP TABLE" is malformed');
  });

  it('fails closed when the ticket asks nothing at all', async () => {
    const error = await failure(runIntake(firstPackage(ticketRef({ ...refundTicket, subject: '', body: '   ' }))));
    expect(error.message).toContain('question missing');
  });

  it.each([
    ['not JSON', ticketRef('{"id": "tkt_1",', 'application/json'), /not valid JSON/],
    ['a JSON array', ticketRef([1, 2]), /not a JSON object/],
    ['a non-string field', ticketRef({ ...refundTicket, body: { html: '<b>hi</b>' } }), /body must be a string/],
    ['an oversized body', ticketRef({ ...refundTicket, body: 'x'.repeat(8_001) }), /over the 8000 cap/],
    [
      'a hash that does not match',
      { ...ticketRef(refundTicket), hash: `sha256:${'0'.repeat(64)}` },
      /does not match declared hash/,
    ],
    ['an unknown URI scheme', { type: 'ticket.raw', uri: 'file:///etc/passwd' }, /unsupported artifact URI/],
    [
      'a stored artifact that is not there',
      { type: 'ticket.raw', uri: artifactUri('1'.repeat(64)) },
      /is not in the store/,
    ],
  ])('rejects %s with ArtifactInvalid', async (_what, ref, message) => {
    const error = await failure(runIntake(firstPackage(ref)));
    expect(error.type).toBe('ArtifactInvalid');
    expect(error.message).toMatch(message);
  });

  it('refuses a delivery meant for another stage or a package that is not handoff.v1', async () => {
    const activities = createActivities({ store });
    const pkg = firstPackage(ticketRef(refundTicket));
    expect((await failure(activities.intake({ stage: 'judge', package: pkg, delivery_key: 'k' }))).type).toBe(
      'StageInputInvalid',
    );
    const broken = { ...pkg, job_id: undefined } as unknown as typeof pkg;
    const error = await failure(activities.intake({ stage: 'intake', package: broken, delivery_key: 'k' }));
    expect(error.type).toBe('StageInputInvalid');
    expect(error.message).toMatch(/job_id/);
  });
});

describe('ticket rules', () => {
  it.each([
    ['I was charged twice, please send the invoice', 'billing'],
    ['I want my money back', 'refund'],
    ['Cannot log in, my 2FA code is rejected', 'account_access'],
    ['The export to CSV is empty', 'data_export'],
    ['We hit the API rate limit, 429 everywhere', 'api'],
    ['Where is my parcel? Tracking has not moved', 'shipping'],
    ['Please delete all data about me under GDPR', 'privacy'],
    ['What colour is your logo?', 'other'],
  ])('%s → %s', (text, intent) => {
    expect(classifyIntent(text).intent).toBe(intent);
  });

  it('scores risk from legal, chargeback and security signals, and anger adds to it', () => {
    expect(assessRisk('How do I export?', 0).risk).toBe('low');
    expect(assessRisk('Refund me or I cancel', 0)).toMatchObject({ risk: 'medium', signals: ['money', 'churn'] });
    expect(assessRisk('My lawyer will file a chargeback', 0)).toMatchObject({ risk: 'high', score: 1 });
    expect(assessRisk('Refund me or I cancel', -0.8).score).toBeGreaterThan(
      assessRisk('Refund me or I cancel', 0).score,
    );
  });

  it('scores sentiment from words and shouting', () => {
    expect(scoreSentiment('Thanks, great app!').sentiment).toBe('positive');
    expect(scoreSentiment('This is UNACCEPTABLE!! Worst service').sentiment).toBe('negative');
    expect(scoreSentiment('How do I export orders?')).toEqual({ sentiment: 'neutral', score: 0 });
  });

  it('detects the language from function words, und when nothing stands out', () => {
    expect(detectLanguage('Bonjour, je ne peux pas me connecter à mon compte, merci')).toBe('fr');
    expect(detectLanguage('Hola, no puedo entrar en mi cuenta, gracias')).toBe('es');
    expect(detectLanguage('How do I reset my password?')).toBe('en');
    expect(detectLanguage('2FA 429 CSV')).toBe('und');
  });
});
