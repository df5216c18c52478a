import { ApplicationFailure } from '@temporalio/common';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SummaryMd, checkPipeline, splitSummary, type HandoffV1 } from '../../../contracts';
import { CLASSIFICATION, SUPPORT_ROUTES, supportRouting } from '../../../contracts/pipelines/support-routing';
import { writeArtifact } from '../../../activities/artifacts';
import { supportRoutingActivities } from '../../../activities/support-routing';
import { scoreComplexity, sentimentLevel, type Classification } from '../../../activities/support-routing/classify';
import { reviewNote } from '../../../activities/support-routing/review';
import { specialistNote, type Specialist } from '../../../activities/support-routing/specialists';
import { refundPromise } from '../../../activities/ticket-triage/summary-policy';
import { openStore, type Store } from '../../../src/worker/store';
import { checkEmitted } from '../../../workflows/rail/invariants';
import { route, type RecordedBodies, type Route } from '../../../workflows/rail/routing';
import { TICKET, packageAt, ref } from '../rail/helpers';
import { firstPackage, ticketRef } from '../stages/helpers';
import { ticketEntry } from '../../../contracts/pipelines/ticket-entry';

const classification = (over: Partial<Classification> = {}): Classification => ({
  ticket_id: 'tkt_1',
  customer_id: 'cus_1',
  question: 'How do I change my plan?',
  intent: 'other',
  intent_confidence: 0,
  sentiment: 0.5,
  complexity: 2,
  complexity_signals: [],
  language: 'en',
  ...over,
});

const CLASSIFIED = ref(CLASSIFICATION, 'a');
const NOTE = ref('summary_md', 'c');
const afterClassify = () => packageAt(['classify'], [TICKET, CLASSIFIED]);
/** Where the table sends a package classify just emitted, with these fields recorded. */
const routeClassified = (over: Partial<Classification>) =>
  route(supportRouting, afterClassify(), { [CLASSIFICATION]: classification(over) });
const hopTo = (r: Route) => (r.kind === 'hop' ? r.to : r.kind);

describe('support-routing: the definition', () => {
  it('is a sound pipeline: one writer (crm-note), a tool-less critic, every stage reachable', () => {
    expect(
      checkPipeline({
        name: supportRouting.name,
        entry: ticketEntry,
        stages: supportRouting.cards,
        routes: SUPPORT_ROUTES,
      }),
    ).toEqual([]);
    expect(supportRouting.cards.filter((c) => c.writes !== null).map((c) => [c.name, c.writes])).toEqual([
      ['crm-note', 'crm'],
    ]);
    expect(supportRouting.get('review')).toMatchObject({ role: 'critic', tools: [] });
    expect(supportRouting.revisits).toEqual([]);
  });
});

describe('support-routing: the routing table', () => {
  it('sends a new ticket to classify', () => {
    expect(route(supportRouting, packageAt([], [TICKET]))).toMatchObject({ kind: 'hop', to: 'classify' });
  });

  it.each<[string, Partial<Classification>, string]>([
    ['an unhappy customer (sentiment 0.2) to escalation', { sentiment: 0.2 }, 'escalation'],
    ['a complex ticket (complexity 9) to senior', { complexity: 9 }, 'senior'],
    ['a billing question to billing', { intent: 'billing' }, 'billing'],
    ['a refund question to billing', { intent: 'refund' }, 'billing'],
    ['a ticket in French to multilingual', { language: 'fr' }, 'multilingual'],
    ['a plain English question to general (the default)', {}, 'general'],
  ])('sends %s', (_what, over, to) => {
    expect(routeClassified(over)).toMatchObject({ kind: 'hop', to, reason: expect.any(String) });
  });

  it.each<[string, Partial<Classification>, string]>([
    ['unhappy beats complex', { sentiment: 0.2, complexity: 9 }, 'escalation'],
    ['unhappy beats billing and language', { sentiment: 0, intent: 'refund', language: 'de' }, 'escalation'],
    ['complex beats billing', { complexity: 10, intent: 'billing' }, 'senior'],
    ['billing beats language', { intent: 'billing', language: 'es' }, 'billing'],
  ])('first match wins: %s', (_what, over, to) => {
    expect(hopTo(routeClassified(over))).toBe(to);
  });

  it.each<[string, Partial<Classification>, string]>([
    ['sentiment exactly 0.3 is not escalated', { sentiment: 0.3 }, 'general'],
    ['sentiment 0.29 is', { sentiment: 0.29 }, 'escalation'],
    ['complexity exactly 8 is not senior', { complexity: 8 }, 'general'],
    ['undetermined language (und) stays general', { language: 'und' }, 'general'],
    ['a regional English tag (en-GB) stays general', { language: 'en-GB' }, 'general'],
    ['a regional tag of another language (fr-CA) is multilingual', { language: 'fr-CA' }, 'multilingual'],
    ['an intent merely near billing (cancellation) is not billing', { intent: 'cancellation' }, 'general'],
  ])('boundary: %s', (_what, over, to) => {
    expect(hopTo(routeClassified(over))).toBe(to);
  });

  it('escalates instead of guessing when no classification body was recorded', () => {
    expect(route(supportRouting, afterClassify())).toEqual({
      kind: 'escalate',
      reason: `no route after ${CLASSIFICATION}`,
    });
  });

  it('never escalates or goes senior on a body whose scores are missing or not numbers', () => {
    const body = { ...classification(), sentiment: '0.1', complexity: undefined };
    expect(hopTo(route(supportRouting, afterClassify(), { [CLASSIFICATION]: body }))).toBe('general');
  });

  it('sends a note to review, a pass to crm-note, and completes after the receipt', () => {
    const noted = packageAt(['classify', 'general'], [TICKET, CLASSIFIED, NOTE]);
    expect(hopTo(route(supportRouting, noted))).toBe('review');
    const pass = packageAt(['classify', 'general', 'review'], [TICKET, CLASSIFIED, NOTE, ref('verdict.v1', 'd')], {
      evaluator: { last_verdict: 'pass', failures: [] },
    });
    expect(hopTo(route(supportRouting, pass))).toBe('crm-note');
    const done = packageAt(['classify', 'general', 'review', 'crm-note'], [...pass.artifacts, ref('receipt.v1', 'f')], {
      evaluator: pass.evaluator,
    });
    expect(route(supportRouting, done)).toEqual({ kind: 'complete', reason: 'CRM note written' });
  });

  it('escalates a failing review to a human (no revision route: the templates would repeat the note)', () => {
    const fail = packageAt(['classify', 'general', 'review'], [TICKET, CLASSIFIED, NOTE, ref('verdict.v1', 'd')], {
      evaluator: { last_verdict: 'fail', failures: ['refund_promise: ...'] },
    });
    expect(route(supportRouting, fail)).toMatchObject({ kind: 'escalate' });
  });
});

describe('support-routing: classify rules', () => {
  it('maps scoreSentiment -1..1 onto 0..1', () => {
    expect([-1, -0.4, 0, 0.5, 1].map(sentimentLevel)).toEqual([0, 0.3, 0.5, 0.75, 1]);
  });

  it('scores a short, single-question, non-technical ticket 0', () => {
    expect(scoreComplexity('How do I change my plan?')).toEqual({ complexity: 0, signals: [] });
  });

  it('adds a point per 400 characters, per question beyond the first and per technical term, each part capped', () => {
    expect(scoreComplexity(`${'a'.repeat(800)} Is the API down? And the webhook?`).complexity).toBe(2 + 1 + 2);
    const everything = `${'a'.repeat(5_000)} ${'Why? '.repeat(9)} API webhook SSO error 500 timeout CSV DNS stack trace`;
    expect(scoreComplexity(everything)).toMatchObject({
      complexity: 10,
      signals: expect.arrayContaining(['9 questions', 'api', 'error code']),
    });
  });
});

describe('support-routing: notes and review', () => {
  const specialists: Specialist[] = ['billing', 'escalation', 'senior', 'multilingual', 'general'];

  it.each(specialists)('the %s note restates the question, promises no refund, and passes review', (name) => {
    const c = classification({ question: 'Can I get a refund for the annual plan?', intent: 'refund', language: 'fr' });
    const note = specialistNote(name, c);
    expect(note).toContain(c.question);
    expect(refundPromise(note)).toBeNull();
    expect(reviewNote(note, c.question, ['no refund promises'])).toEqual({
      verdict: 'pass',
      scores: { length: 1, policy: 1, answers_question: 1 },
      failures: [],
    });
  });

  it('review fails a refund promise, a note too short, and a note that drops the question', () => {
    const question = 'Where is my refund?';
    const promise = reviewNote(`We will refund you the full amount today. ${question} ${'x'.repeat(80)}`, question, [
      'no refund promises',
    ]);
    expect(promise.verdict).toBe('fail');
    expect(promise.failures).toEqual([expect.stringMatching(/^refund_promise: /)]);
    expect(reviewNote(question, question, []).failures).toEqual([expect.stringMatching(/^too_short: /)]);
    expect(reviewNote('x'.repeat(100), question, []).failures).toEqual([expect.stringMatching(/^off_topic: /)]);
  });
});

describe('support-routing: the stages on a real store, routed by the table', () => {
  let store: Store;
  let activities: ReturnType<typeof supportRoutingActivities>;
  beforeEach(async () => {
    store = await openStore({ sqlitePath: ':memory:' });
    activities = supportRoutingActivities({ store });
  });
  afterEach(async () => {
    await store.close();
  });

  const deliver = (stage: string, pkg: HandoffV1, n: number) =>
    activities[stage as keyof typeof activities]({ stage, package: pkg, delivery_key: `${pkg.job_id}:${stage}:${n}` });

  /** Plays the rail: route by the table, deliver, check the rail's invariants, record the body. */
  async function drive(ticket: object, jobId: string, constraints?: string[]) {
    let pkg = firstPackage(ticketRef(ticket), { job_id: jobId, ...(constraints ? { constraints } : {}) });
    const bodies: Record<string, Record<string, unknown>> = {};
    const stages: string[] = [];
    let step = route(supportRouting, pkg);
    while (step.kind === 'hop') {
      const result = await deliver(step.to, step.package, stages.length);
      const card = supportRouting.get(step.to)!;
      expect(
        checkEmitted({
          delivered: step.package,
          emitted: result.package,
          artifact: result.artifact,
          body: result.body,
          costUsd: result.cost_usd,
          card,
        }),
      ).toEqual([]);
      stages.push(step.to);
      bodies[result.artifact.type] = result.body as Record<string, unknown>;
      pkg = result.package;
      step = route(supportRouting, pkg, bodies as RecordedBodies);
    }
    return { stages, end: step, pkg, bodies };
  }

  const ticket = (id: string, subject: string, body: string) => ({ id, customer_id: 'cus_7', subject, body });
  // Acronyms of 4+ capitals (HTTP, SAML) would read as shouting to scoreSentiment and escalate it.
  const longTechnical = [
    'Our webhook deliveries fail with error 500 since we moved SSO to Okta last week.',
    'We run the integration from three regions and log every request with its headers. '.repeat(12),
    'Is the API rate limited per key? Why do the requests time out after ten seconds? Does the SDK retry? Which TLS certificate chain do you expect?',
  ].join(' ');

  it.each([
    [
      'an angry ticket',
      ticket(
        'tkt_angry',
        'Logged out AGAIN',
        'This is UNACCEPTABLE!! The app logs me out every hour. Why is this still broken?',
      ),
      'escalation',
      'needs_human',
    ],
    [
      'a billing ticket',
      ticket('tkt_bill', 'Invoice', 'I was charged twice on my invoice this month. Can you check the charge?'),
      'billing',
      'triaged',
    ],
    ['a long technical ticket', ticket('tkt_tech', 'Webhooks failing', longTechnical), 'senior', 'triaged'],
    [
      'a ticket in French',
      ticket(
        'tkt_fr',
        'Mot de passe',
        'Bonjour, je ne peux pas changer mon mot de passe. Pouvez-vous m’aider avec mon compte ?',
      ),
      'multilingual',
      'triaged',
    ],
    [
      'a plain question',
      ticket('tkt_plain', 'Dark mode', 'Hello, is there a dark mode in the mobile app?'),
      'general',
      'triaged',
    ],
  ])('%s: classify → %s → review → crm-note, written once', async (_what, raw, specialist, status) => {
    const { stages, end, pkg, bodies } = await drive(raw, `job_${raw.id}`);
    expect(stages).toEqual(['classify', specialist, 'review', 'crm-note']);
    expect(end).toEqual({ kind: 'complete', reason: 'CRM note written' });
    expect(pkg.artifacts.map((a) => a.type)).toEqual([
      'ticket.raw',
      CLASSIFICATION,
      'summary_md',
      'verdict.v1',
      'receipt.v1',
    ]);
    expect(bodies['verdict.v1']).toMatchObject({ verdict: 'pass', summary_hash: pkg.artifacts[2]!.hash });
    expect(bodies['receipt.v1']).toMatchObject({
      idempotency_key: `job_${raw.id}:crm-note:receipt.v1`,
      ticket_id: raw.id,
      status: 'created',
    });
    expect(await store.getCrmTicket(raw.id)).toMatchObject({ status, note: bodies.summary_md!.markdown });
    expect(await store.listWrites(`job_${raw.id}`)).toHaveLength(1);
    // One summary segment per stage, each saying what it did.
    const segments = splitSummary(pkg.summary);
    expect(segments.map((s) => s.split(':', 1)[0])).toEqual([
      `hop 1 classify → ${CLASSIFICATION}`,
      `hop 1 ${specialist} → summary_md`,
      'hop 1 review → verdict.v1',
      'hop 1 crm-note → receipt.v1',
    ]);
    expect(segments[0]).toMatch(/: intent \w+, sentiment [\d.]+, complexity \d+\/10, language \w+$/);
    expect(segments[1]).toMatch(
      new RegExp(` note for ticket ${raw.id}, taken over from classify \\(intent \\w+, sentiment `),
    );
    expect(segments[2]).toBe('hop 1 review → verdict.v1: verdict pass');
    expect(segments[3]).toBe(
      `hop 1 crm-note → receipt.v1: CRM note written to record crm_tickets/${raw.id} (created; ticket ${raw.id} ${status})`,
    );
  });

  it('under "redact personal data" the note, the CRM note and the summary hold no email, phone or card number, and review passes it', async () => {
    // No "?" in the body: the subject is the question the note quotes (intake splits sentences at dots).
    const raw = ticket(
      'tkt_pii',
      'Invoice charged twice to card 4111 1111 1111 1111 (jane.doe@example.com, +1 415 555 0132)',
      'I was charged twice on card 4111 1111 1111 1111 this month. Mail jane.doe@example.com or call +1 415 555 0132.',
    );
    const { stages, pkg, bodies } = await drive(raw, 'job_pii', ['no refund promises', 'redact personal data']);
    expect(stages).toEqual(['classify', 'billing', 'review', 'crm-note']);
    const note = bodies.summary_md!.markdown as string;
    expect(note).toContain('> Invoice charged twice to card [card] ([email], [phone])');
    const crm = await store.getCrmTicket(raw.id);
    expect(crm?.note).toBe(note);
    for (const text of [note, crm!.note, pkg.summary ?? '']) expect(text).not.toMatch(/4111|jane\.doe|555 0132/);
  });

  it('classify reports the routing facts it derived', async () => {
    const { bodies } = await drive(ticket('tkt_tech2', 'Webhooks failing', longTechnical), 'job_tech2');
    expect(bodies[CLASSIFICATION]).toMatchObject({
      ticket_id: 'tkt_tech2',
      customer_id: 'cus_7',
      intent: 'api',
      sentiment: 0.5,
      language: 'en',
      complexity: 10,
    });
  });

  it('classify refuses a ticket without ids and lists the gaps as open questions', async () => {
    const error = await deliver(
      'classify',
      firstPackage(ticketRef({ subject: 'Refund', body: 'Where is my refund?' })),
      0,
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApplicationFailure);
    expect(error).toMatchObject({ type: 'EntryFieldsMissing', nonRetryable: true });
    const [details] = (error as ApplicationFailure).details as [{ open_questions: string[] }];
    expect(details.open_questions).toEqual([
      'ticket_id missing: the ticket does not name one',
      'customer_id missing: the ticket does not name one',
    ]);
  });

  it('crm-note refuses a pass that reviewed another note than the latest, and writes nothing', async () => {
    const raw = ticket('tkt_swap', 'Dark mode', 'Hello, is there a dark mode in the mobile app?');
    const { pkg } = await drive(raw, 'job_swap_ref');
    // The reviewed package with a newer, unreviewed note slipped in before the verdict.
    const newer = await writeArtifact(store, 'summary_md', SummaryMd, {
      markdown: 'A different note nobody reviewed.',
      cited_keys: [],
    });
    const [ticketRaw, classified, note, verdict] = pkg.artifacts;
    const swapped: HandoffV1 = {
      ...pkg,
      job_id: 'job_swap',
      artifacts: [ticketRaw!, classified!, note!, newer, verdict!],
    };
    // Neither the unreviewed note nor job_swap_ref's artifacts were recorded for job_swap.
    await expect(deliver('crm-note', swapped, 9)).rejects.toMatchObject({
      type: 'ArtifactInvalid',
      message: expect.stringMatching(/was not recorded for job job_swap/),
    });
    expect(await store.listWrites('job_swap')).toEqual([]);
  });
});
