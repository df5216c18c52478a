import { describe, expect, it } from 'vitest';
import {
  AckRecord,
  HUMAN_NOTE_PREFIX,
  HumanDecision,
  JobRequest,
  JobResult,
  LIMITS,
  StageHopRequest,
  handoffV1,
  toContractErrors,
  validators,
  type StandaloneValidator,
} from '../../../contracts';
import { TicketRaw } from '../../../contracts/pipelines/ticket-artifacts';
import { sampleJobRequest } from '../../../src/devtools/samples/tickets';
import { fixture } from './helpers';

const request = sampleJobRequest('job-1');
const pkg = fixture('valid.json') as Record<string, unknown>;
const result = { job_id: 'job-1', status: 'completed', package: pkg, acks: [], spent_usd: 0.02, hops: 5 };

/** Paths of what zod (the client, the decide validator) and the generated ajv validator (the
 * rail's sandbox) refuse: both must refuse the same value. */
function refusals(
  schema: { safeParse: (v: unknown) => { success: boolean; error?: { issues: { path: PropertyKey[] }[] } } },
  validate: StandaloneValidator,
  value: unknown,
) {
  const zod = schema.safeParse(value).error?.issues.map((i) => `/${i.path.join('/')}`) ?? [];
  const ajv = validate(value) ? [] : toContractErrors(validate.errors).map((e) => e.path);
  return { zod: [...new Set(zod)], ajv: [...new Set(ajv)] };
}
const both = (path: string) => ({ zod: [path], ajv: [path] });

describe('amounts are bounded (finite wallet)', () => {
  it.each([
    ['budget.usd 1e308', { budget: { usd: 1e308, revisions: 2 } }, '/budget/usd'],
    ['budget.usd past the cap', { budget: { usd: LIMITS.usd + 1, revisions: 2 } }, '/budget/usd'],
    [
      'budget.revisions MAX_SAFE_INTEGER',
      { budget: { usd: 1, revisions: Number.MAX_SAFE_INTEGER } },
      '/budget/revisions',
    ],
  ])('a job request with %s is refused', (_name, patch, path) => {
    expect(refusals(JobRequest, validators.jobRequest, { ...request, ...patch })).toEqual(both(path));
  });

  it('a job request at the caps is accepted', () => {
    expect(
      refusals(JobRequest, validators.jobRequest, {
        ...request,
        budget: { usd: LIMITS.usd, revisions: LIMITS.revisions },
      }),
    ).toEqual({ zod: [], ajv: [] });
  });

  it.each([
    ['usd 1e308', { usd: 1e308 }, '/usd'],
    ['revisions MAX_SAFE_INTEGER', { revisions: Number.MAX_SAFE_INTEGER }, '/revisions'],
    ['usd below one micro-dollar', { usd: 1e-7 }, '/usd'],
  ])('a top_up decision with %s is refused', (_name, amounts, path) => {
    expect(refusals(HumanDecision, validators.humanDecision, { action: 'top_up', actor: 'ops', ...amounts })).toEqual(
      both(path),
    );
  });

  it('a top_up of exactly one micro-dollar, or of 0 usd with revisions, is accepted', () => {
    for (const amounts of [{ usd: 0.000001 }, { usd: 0, revisions: 1 }]) {
      expect(refusals(HumanDecision, validators.humanDecision, { action: 'top_up', actor: 'ops', ...amounts })).toEqual(
        { zod: [], ajv: [] },
      );
    }
  });

  it('a package wallet and a job result spent figure past the cap are refused', () => {
    const budget = { usd_remaining: 1e308, revisions_remaining: Number.MAX_SAFE_INTEGER };
    expect(refusals(handoffV1, validators.handoffV1, { ...pkg, budget })).toEqual({
      zod: ['/budget/usd_remaining', '/budget/revisions_remaining'],
      ajv: ['/budget/usd_remaining', '/budget/revisions_remaining'],
    });
    expect(refusals(JobResult, validators.jobResult, { ...result, spent_usd: 1e308, overspent_usd: 1e308 })).toEqual({
      zod: ['/spent_usd', '/overspent_usd'],
      ajv: ['/spent_usd', '/overspent_usd'],
    });
  });
});

describe('a revise note fits the failure item it becomes', () => {
  const revise = (note: string) => ({ action: 'revise', actor: 'ops', note });

  it('a note of the longest accepted length, filed as `human: <note>`, is a valid evaluator failure', () => {
    const note = 'n'.repeat(LIMITS.decisionNote);
    expect(refusals(HumanDecision, validators.humanDecision, revise(note))).toEqual({ zod: [], ajv: [] });
    const evaluator = { last_verdict: 'fail', failures: [`${HUMAN_NOTE_PREFIX}${note}`] };
    expect(refusals(handoffV1, validators.handoffV1, { ...pkg, evaluator })).toEqual({ zod: [], ajv: [] });
  });

  it.each([494, 500])('a note of %i characters is refused (filed, it would break every later hop)', (length) => {
    expect(refusals(HumanDecision, validators.humanDecision, revise('n'.repeat(length)))).toEqual(both('/note'));
  });
});

describe('text both stores can hold, refused before any stage runs', () => {
  const ticket = (patch: object) => ({ ...request.ticket, ...patch });

  it.each([
    ['a NUL in the ticket body', ticket({ body: 'charged twice\u0000' }), '/body'],
    ['a lone high surrogate in the ticket body', ticket({ body: 'charged twice \ud83d' }), '/body'],
    ['a lone low surrogate in the ticket subject', ticket({ subject: '\ude00 refund' }), '/subject'],
  ])(
    "a ticket entry with %s is refused by the ticket pipelines' entry schema, naming the field",
    (_name, value, path) => {
      expect(refusals(TicketRaw, validators.ticketRaw, value)).toEqual(both(path));
    },
  );

  it.each([
    ['a NUL in the goal', { ...request, goal: 'triage\u0000' }, '/goal'],
    [
      'a lone surrogate in a constraint',
      { ...request, constraints: ['no refund promises', 'x\ud800'] },
      '/constraints/1',
    ],
  ])('a job request with %s is refused, naming the field', (_name, value, path) => {
    expect(refusals(JobRequest, validators.jobRequest, value)).toEqual(both(path));
    expect(JobRequest.safeParse(value).error?.issues[0]?.message).toBe('must not contain NUL or an unpaired surrogate');
  });

  it('the raw ticket artifact is held to the same rule', () => {
    expect(refusals(TicketRaw, validators.ticketRaw, { ...request.ticket, body: 'a\u0000b' })).toEqual(both('/body'));
  });

  it('paired surrogates (emoji), tabs and newlines are fine', () => {
    expect(
      refusals(TicketRaw, validators.ticketRaw, ticket({ subject: 'refund 😀', body: 'line 1\n\tline 2 😀' })),
    ).toEqual({ zod: [], ajv: [] });
  });

  it('a decision note with a NUL or a lone surrogate is refused', () => {
    for (const note of ['ok\u0000', 'ok\udfff']) {
      expect(refusals(HumanDecision, validators.humanDecision, { action: 'revise', actor: 'ops', note })).toEqual(
        both('/note'),
      );
    }
  });

  it('no package text may hold a NUL (PostgreSQL cannot store it)', () => {
    expect(refusals(handoffV1, validators.handoffV1, { ...pkg, summary: 'a\u0000', constraints: ['b\u0000'] })).toEqual(
      {
        zod: ['/constraints/0', '/summary'],
        ajv: ['/constraints/0', '/summary'],
      },
    );
  });
});

describe('actors are visible single-line names; goals are not blank', () => {
  const decision = (actor: string) => ({ action: 'approve', actor });
  const ack = { ...(pkg.ack as object), actor: 'ops' };

  it.each([
    ['only spaces', '   '],
    ['only a no-break space', '\u00a0'],
    ['a NUL', 'ali\u0000ce'],
    ['a right-to-left override', '\u202eecila'],
    ['a newline', 'alice\nbob'],
    ['a tab', 'alice\t'],
    ['DEL', 'alice\u007f'],
    ['a zero-width space', 'ali\u200bce'],
    ['a lone surrogate', 'alice\ud800'],
  ])('an actor with %s is refused on a decision and on an ack', (_name, actor) => {
    expect(refusals(HumanDecision, validators.humanDecision, decision(actor))).toEqual(both('/actor'));
    expect(refusals(AckRecord, validators.ackRecord, { ...ack, actor })).toEqual(both('/actor'));
  });

  it.each(['ops@example.com', 'Zoë Müller', '山田 太郎', 'dana 😀'])('the actor %j is accepted', (actor) => {
    expect(refusals(HumanDecision, validators.humanDecision, decision(actor))).toEqual({ zod: [], ajv: [] });
    expect(refusals(AckRecord, validators.ackRecord, { ...ack, actor })).toEqual({ zod: [], ajv: [] });
  });

  it.each([' ', '\n\t ', '\u3000'])('a job request whose goal is blank (%j) is refused', (goal) => {
    expect(refusals(JobRequest, validators.jobRequest, { ...request, goal })).toEqual(both('/goal'));
  });
});

// stageHop checks its envelope with the generated validator (workflow code builds no zod schema).
describe('a stageHop envelope', () => {
  const hop = { stage: 'intake', package: pkg };
  it.each([
    ['no package', { stage: 'intake' }, '/package'],
    ['a stage name past 200 characters', { ...hop, stage: 's'.repeat(201) }, '/stage'],
    ['a delivery id with a lone surrogate', { ...hop, delivery_id: 'd\uD800' }, '/delivery_id'],
    ['max_hops 0', { ...hop, max_hops: 0 }, '/max_hops'],
    ['max_hops past the hop cap', { ...hop, max_hops: LIMITS.hops + 1 }, '/max_hops'],
    ['max_hops 1.5', { ...hop, max_hops: 1.5 }, '/max_hops'],
  ])('with %s is refused by both', (_name, value, path) => {
    expect(refusals(StageHopRequest, validators.stageHopRequest, value)).toEqual(both(path));
  });

  it('with any package value, null included, is accepted by both (the hop acks the package)', () => {
    for (const value of [
      hop,
      { ...hop, package: null },
      { ...hop, package: 'x', pipeline: 'ticket-triage', delivery_id: 'd-1', max_hops: LIMITS.chain },
    ]) {
      expect(refusals(StageHopRequest, validators.stageHopRequest, value)).toEqual({ zod: [], ajv: [] });
    }
  });
});
