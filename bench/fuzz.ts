/**
 * `npm run fuzz [-- --cases N --seed S --activity-share F]`: hostile deliveries against the rail's
 * hop, in-process. Every case plays one hop exactly as workflows/run-hop.ts does (admitHop →
 * priorDelivery → decideHop → stage activity → the rail's own lookup when the stage claims a
 * recorded delivery → settleHop → recordDelivery, as stageHop runs it), but without
 * Temporal, over a real in-memory SQLite store. Most cases exercise the pure core with simulated
 * facts (a simulated duplicate lookup and stage result); a share run the real stage activities
 * (createActivities({ store })) on packages honestly relayed through intake → retrieve → draft →
 * judge, then mutated: dropped/changed fields, type confusion, hostile numbers, forged evidence,
 * cross-job artifacts, replays and concurrent twins — and lying stages: a claimed duplicate the
 * rail has no record of, carrying a rewritten package.
 *
 * After every case, checked against the store (never the harness's own bookkeeping):
 *   (a) no write without a passing verdict the job's judge recorded over the written summary
 *   (b) at most one write per idempotency key
 *   (c) every hop has at least one ack, and every ack is a valid AckRecord
 *   (d) admitHop / decideHop / settleHop (and ackRecord) never throw
 * Exits non-zero when a false accept or a crash is found; prints the seed to replay the run.
 */
import { parseArgs } from 'node:util';
import { ApplicationFailure } from '@temporalio/common';
import fc from 'fast-check';
import {
  AckRecord,
  LIMITS,
  type Artifact,
  type HandoffV1,
  type JobRequest,
  type Pipeline,
  type StageCard,
  type StageResult,
  type StageWork,
} from '../contracts';
import { ticketTriage } from '../contracts/pipelines/ticket-triage';
import { createActivities, type HandrailActivities } from '../activities/built-in';
import { scopedJob, scopedKey } from '../activities/stage';
import { firstPackage } from '../workflows/rail/first-package';
import {
  admitHop,
  decideHop,
  deliveredPackage,
  stampAck,
  type HopRequest,
  type StageAnswer,
} from '../workflows/rail/hop-decisions';
import { claimsRecorded, concludeHop } from '../workflows/rail/conclude';
import { DEFAULT_MAX_HOPS } from '../workflows/rail/hop-chain';
import { loadHelpCenter } from '../src/worker/corpus';
import { openStore, type Store } from '../src/worker/store';
import { parseArtifactUri, sha256Hex } from '../src/worker/store/content';

// ---------------------------------------------------------------------------------------------
// 1. The harness: one hop, in-process, as workflows/run-hop.ts plays it.
// ---------------------------------------------------------------------------------------------

/** stageHop's traceparent for acks of packages too broken to carry one (workflows/stage-hop.ts). */
export const NO_TRACE = '00-0000000000000000000000000000dead-000000000000dead-00';

/** What the shell gets from Temporal: the rail's delivery records and the stage activity. */
export interface HopDeps {
  priorDelivery(input: { delivery_key: string; package?: HandoffV1 }): Promise<StageResult | null>;
  recordDelivery(input: {
    delivery_key: string;
    stage: string;
    package: HandoffV1;
    result: StageResult;
  }): Promise<void>;
  runStage(card: StageCard, work: StageWork): Promise<StageResult>;
}

/** A throw from the rail's pure decisions: in the workflow it would fail the workflow task. */
export class RailCrash extends Error {
  constructor(
    readonly where: string,
    override readonly cause: unknown,
  ) {
    super(`${where} threw: ${cause instanceof Error ? `${cause.name}: ${cause.message}` : String(cause)}`);
  }
}

export interface HopPlay {
  /** Every ack of the hop, in order (the pre-work ack, then rejected_invariant when the output broke one). */
  acks: AckRecord[];
  /** The stage activity was called. */
  ran: boolean;
  /** The stage returned a result (its own or another delivery's). */
  result?: StageResult;
  /** The store holds more writes for this job than before the stage ran (writers only). */
  wrote: boolean;
  ok: boolean;
  /** The package after the hop, as the shell's HopOutcome.package. */
  package?: HandoffV1;
  /** A business failure of the stage (ApplicationFailure): a normal refusal. */
  failure?: string;
  /** A stage threw something that is not an ApplicationFailure (a bug in a stage, not a refusal). */
  stageError?: string;
  /** A pure rail function threw. */
  crash?: RailCrash;
  /** What the rail admitted (for the invariants): the stage, key and job it acked under. */
  admitted?: { stage: string; key: string; jobId: string; deliverable: boolean; arrived?: HandoffV1 };
}

const pure = <T>(where: string, fn: () => T): T => {
  try {
    return fn();
  } catch (err) {
    throw new RailCrash(where, err);
  }
};

/**
 * One hop. A faithful mirror of `hopOnce` in workflows/run-hop.ts (checkPriorDelivery
 * as stageHop runs it); the Temporal-only parts are replaced: the ACK-timeout fallback cannot
 * happen in-process, so the stage runs once, and any stage throw is a failed stage.
 * `store` (optional) is read only to tell whether a writer's run added a write.
 */
export async function playHop(r: HopRequest, deps: HopDeps, store?: Store): Promise<HopPlay> {
  try {
    return await hopOnce(r, deps, store);
  } catch (err) {
    if (err instanceof RailCrash) return { acks: [], ran: false, wrote: false, ok: false, crash: err };
    throw err;
  }
}

async function hopOnce(r: HopRequest, deps: HopDeps, store: Store | undefined): Promise<HopPlay> {
  const a = pure('admitHop', () => admitHop(r));
  const admitted = {
    stage: a.stage,
    key: a.key,
    jobId: a.jobId,
    deliverable: a.deliverable,
    ...(a.arrived ? { arrived: a.arrived } : {}),
  };
  const prior = a.deliverable ? await deps.priorDelivery({ delivery_key: a.key, package: a.arrived }) : null;
  const ack = pure('stampAck', () => stampAck(a, r, decideHop(a, r, prior), new Date()));
  const conclude = (answer?: StageAnswer, recorded?: StageResult | null) =>
    pure('concludeHop', () => concludeHop(a, r, ack, new Date(), prior, answer, recorded));
  if (ack.ack !== 'accepted' || !a.arrived || !a.card) return { ...conclude(), ran: false, wrote: false, admitted };

  // The stage call is the only part the shell does differently (Temporal, retries, fallback).
  const writes = async () => (a.card!.writes !== null && store ? (await store.listWrites(a.jobId)).length : 0);
  const before = await writes();
  let answer: StageAnswer;
  let stageError: string | undefined;
  try {
    answer = {
      result: await deps.runStage(a.card, {
        stage: a.stage,
        package: deliveredPackage({ ...a, arrived: a.arrived }, ack),
        delivery_key: a.key,
      }),
      card: a.card,
    };
  } catch (err) {
    if (!(err instanceof ApplicationFailure))
      stageError = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
    answer = {
      failure: `${a.card.name} failed: ${err instanceof ApplicationFailure ? `${err.type ?? 'Error'}: ${err.message}` : stageError}`,
    };
  }
  const claimed = pure('claimsRecorded', () => claimsRecorded(answer));
  const outcome = conclude(
    answer,
    claimed ? await deps.priorDelivery({ delivery_key: a.key, package: a.arrived }) : null,
  );
  if (outcome.ok && outcome.result && !claimed)
    await deps.recordDelivery({
      delivery_key: a.key,
      stage: outcome.stage,
      package: a.arrived,
      result: outcome.result,
    });
  return {
    ...outcome,
    ran: true,
    wrote: (await writes()) > before,
    admitted,
    ...(stageError ? { stageError, failure: undefined } : {}),
  };
}

/** The real activities as the shell's dependencies. */
export function activityDeps(activities: HandrailActivities): HopDeps {
  const stages = activities as unknown as Record<string, (work: StageWork) => Promise<StageResult>>;
  return {
    priorDelivery: (input) => activities.priorDelivery(input),
    recordDelivery: (input) => activities.recordDelivery(input),
    runStage: (card, work) => stages[card.name]!(work),
  };
}

// ---------------------------------------------------------------------------------------------
// 2. The world: a store with the corpus, and real packages honestly relayed.
// ---------------------------------------------------------------------------------------------

const TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
/** The planned relay: the stage a package at position i goes to next. */
export const RELAY = ['intake', 'retrieve', 'draft', 'judge', 'writeback'] as const;

export interface Job {
  id: string;
  ticketId: string;
  /** packages[i]: the package ready for RELAY[i] (0: the first package; 4: after the judge). */
  packages: HandoffV1[];
  /** results[i]: what RELAY[i] returned on the honest relay (for simulated stage results). */
  results: StageResult[];
}

export interface World {
  store: Store;
  activities: HandrailActivities;
  deps: HopDeps;
  pipeline: Pipeline;
  /** Honestly relayed jobs, judged (some pass, some fail). */
  pool: Job[];
  /** Receipts already proven backed (a first write never changes). */
  verified: Set<string>;
  /** Fresh ids: forged jobs and cases that relay a job of their own. */
  nextId(prefix: string): string;
  close(): Promise<void>;
}

const TICKETS: { subject: string; body: string; channel?: string }[] = [
  {
    subject: 'Charged twice for my annual plan',
    body: 'I upgraded to the annual plan yesterday and my card was charged twice. How do refunds work for a duplicate charge?',
  },
  { subject: 'Cannot reset my password', body: 'The password reset email never arrives. How do I reset my password?' },
  { subject: 'Export my data', body: 'How can I export all my invoices as CSV?' },
  {
    subject: 'Where is my order?',
    body: 'My order has not arrived after two weeks. Can you tell me where it is?',
    channel: 'email',
  },
  {
    subject: 'Cancel subscription',
    body: 'I want to cancel my subscription before the next renewal. How do I cancel?',
  },
  { subject: 'Blorp', body: 'Quux zorblax frimble?' },
];

function request(jobId: string, t: number, ticketId: string): JobRequest {
  const ticket = TICKETS[t % TICKETS.length]!;
  return {
    job_id: jobId,
    ticket: {
      id: ticketId,
      customer_id: `cus_${t}`,
      subject: ticket.subject,
      body: ticket.body,
      ...(ticket.channel ? { channel: ticket.channel } : {}),
      received_at: '2026-11-29T09:14:00Z',
    },
    goal: 'Draft internal triage summary; do not send to customer',
    constraints: ['no refund promises', 'cite help center or no_match'],
    budget: { usd: 1, revisions: 2 },
  } as JobRequest;
}

/** Relays a fresh job through intake → retrieve → draft → judge with the harness itself. */
export async function relayJob(
  world: Pick<World, 'deps' | 'pipeline' | 'store'>,
  jobId: string,
  t: number,
): Promise<Job> {
  const ticketId = `tkt_${jobId}`;
  let pkg = firstPackage(request(jobId, t, ticketId), TRACEPARENT, ticketTriage);
  const packages: HandoffV1[] = [pkg];
  const results: StageResult[] = [];
  for (const stage of RELAY.slice(0, 4)) {
    const play = await playHop(hopRequest(world.pipeline, stage, pkg, 'relay'), world.deps, world.store);
    if (!play.ok || !play.result || !play.package)
      throw new Error(
        `honest relay of ${jobId} failed at ${stage}: ${JSON.stringify(play.acks.map((x) => x.reason))} ${play.failure ?? ''}`,
      );
    results.push(play.result);
    pkg = play.package;
    packages.push(pkg);
  }
  return { id: jobId, ticketId, packages, results };
}

export function hopRequest(
  pipeline: Pipeline,
  stage: unknown,
  pkg: unknown,
  reason = 'direct delivery',
  extra: Partial<HopRequest> = {},
): HopRequest {
  return {
    pipeline,
    stage: stage as string,
    package: pkg,
    reason,
    maxHops: DEFAULT_MAX_HOPS,
    fallbackTraceparent: NO_TRACE,
    fallbackJobId: 'fuzz-fallback',
    ...extra,
  };
}

export async function createWorld(opts: { poolSize?: number; runId?: string } = {}): Promise<World> {
  const store = await openStore({ sqlitePath: ':memory:' });
  await loadHelpCenter(store);
  const activities = createActivities({ store });
  const deps = activityDeps(activities);
  const pipeline = ticketTriage as unknown as Pipeline;
  let seq = 0;
  const run = opts.runId ?? Date.now().toString(36);
  const nextId = (prefix: string) => `${prefix}-${run}-${++seq}`;
  const pool: Job[] = [];
  for (let t = 0; t < (opts.poolSize ?? TICKETS.length); t++)
    pool.push(await relayJob({ deps, pipeline, store }, nextId('pool'), t));
  return { store, activities, deps, pipeline, pool, verified: new Set(), nextId, close: () => store.close() };
}

// ---------------------------------------------------------------------------------------------
// 3. Generators: cases are data (so fast-check shrinks them); applying one needs the world.
// ---------------------------------------------------------------------------------------------

const HOSTILE_NUMBERS = [
  NaN,
  Infinity,
  -Infinity,
  -1,
  -0,
  0,
  1e-9,
  5e-324,
  0.1 + 0.2,
  1e6,
  1e6 + 1,
  1e12,
  1e308,
  Number.MAX_SAFE_INTEGER,
  Number.MAX_SAFE_INTEGER + 2,
  2 ** 53,
  -(2 ** 53),
];
const hostileNumber = fc.oneof(fc.constantFrom(...HOSTILE_NUMBERS), fc.double(), fc.integer());
const hostileString = fc.oneof(
  fc.constantFrom(
    '',
    ' ',
    '\u0000',
    '\ud800',
    '\u202e',
    'pass',
    'none',
    'fail',
    'handoff.v1',
    '1e3',
    '__proto__',
    'x'.repeat(600),
  ),
  fc.string({ maxLength: 20, unit: 'binary' }),
);
/** Values a field may be confused with: JSON values and what JSON cannot carry. */
const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  { arbitrary: fc.jsonValue({ maxDepth: 2 }), weight: 3 },
  { arbitrary: hostileNumber, weight: 2 },
  { arbitrary: hostileString, weight: 2 },
  { arbitrary: fc.constantFrom<unknown>(null, undefined, true, false, [], {}, [[]], { toString: 1 }), weight: 1 },
);

const STAGE_NAMES = [
  ...RELAY,
  'client',
  'human',
  'unknown-stage',
  'Intake',
  'intake ',
  '',
  'writeback\u0000',
  '__proto__',
  'constructor',
  'toString',
  'hasOwnProperty',
];
const stageName: fc.Arbitrary<unknown> = fc.oneof(
  { arbitrary: fc.constantFrom<unknown>(...STAGE_NAMES), weight: 4 },
  { arbitrary: fc.string({ maxLength: 70 }), weight: 1 },
  {
    arbitrary: fc.constantFrom<unknown>(
      5,
      null,
      undefined,
      true,
      ['intake'],
      { name: 'intake' },
      JSON.parse('{"toString":1}'),
    ),
    weight: 1,
  },
);
const slugish = fc.oneof(
  fc.constantFrom(...RELAY, 'client', 'human'),
  fc.stringMatching(/^[a-z][a-z0-9_.-]{0,8}$/),
  fc.constantFrom('', 'Bad', 'x'.repeat(65)),
);
const hopBlock: fc.Arbitrary<unknown> = fc.oneof(
  fc.constant(undefined),
  fc.record({
    from: slugish,
    to: slugish,
    reason: fc.oneof(fc.string({ maxLength: 30 }), hostileString),
    count: fc.oneof(
      fc.nat(12),
      fc.constantFrom(Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER - 1, 2 ** 53, -1, 1.5, NaN),
    ),
    chain: fc.oneof(fc.array(slugish, { maxLength: 10 }), fc.array(slugish, { minLength: 126, maxLength: 130 })),
  }),
  hostileValue,
);
const FORGE_TYPES = ['ticket.raw', 'intake.v1', 'chunks.v1', 'summary_md', 'verdict.v1', 'receipt.v1'] as const;

export type Mutation =
  | { op: 'drop'; at: number }
  | { op: 'set'; at: number; value: unknown }
  | { op: 'budget'; usd: unknown; revisions: unknown }
  | { op: 'flipPass' }
  | { op: 'forge'; type: (typeof FORGE_TYPES)[number]; how: 'replace' | 'append' | 'beforeLast'; victim: number }
  | { op: 'crossJob' }
  | { op: 'adoptJob'; other: number }
  | { op: 'borrow'; other: number; i: number }
  | { op: 'swap'; i: number; j: number }
  | { op: 'reverse' }
  | { op: 'dropArtifact'; i: number }
  | { op: 'dupArtifact'; i: number }
  | { op: 'newerDraft'; how: 'append' | 'replace' | 'otherJob' }
  | { op: 'staleHash'; i: number }
  | { op: 'hop'; hop: unknown }
  | { op: 'replace'; value: unknown }
  | { op: 'schema'; value: unknown }
  | { op: 'extra'; key: string; value: unknown }
  | { op: 'forgeAck' }
  | { op: 'bloat'; where: 'goal' | 'summary' | 'uri'; size: number };

export const mutationArb: fc.Arbitrary<Mutation> = fc.oneof(
  { arbitrary: fc.record({ op: fc.constant('drop' as const), at: fc.nat() }), weight: 3 },
  { arbitrary: fc.record({ op: fc.constant('set' as const), at: fc.nat(), value: hostileValue }), weight: 4 },
  {
    arbitrary: fc.record({
      op: fc.constant('budget' as const),
      usd: fc.oneof(hostileNumber, hostileValue),
      revisions: fc.oneof(hostileNumber, hostileValue),
    }),
    weight: 3,
  },
  { arbitrary: fc.constant({ op: 'flipPass' as const }), weight: 3 },
  {
    arbitrary: fc.record({
      op: fc.constant('forge' as const),
      type: fc.constantFrom(...FORGE_TYPES),
      how: fc.constantFrom('replace' as const, 'append' as const, 'beforeLast' as const),
      victim: fc.nat(),
    }),
    weight: 5,
  },
  { arbitrary: fc.constant({ op: 'crossJob' as const }), weight: 4 },
  { arbitrary: fc.record({ op: fc.constant('adoptJob' as const), other: fc.nat() }), weight: 3 },
  { arbitrary: fc.record({ op: fc.constant('borrow' as const), other: fc.nat(), i: fc.nat() }), weight: 3 },
  { arbitrary: fc.record({ op: fc.constant('swap' as const), i: fc.nat(), j: fc.nat() }), weight: 2 },
  { arbitrary: fc.constant({ op: 'reverse' as const }), weight: 1 },
  { arbitrary: fc.record({ op: fc.constant('dropArtifact' as const), i: fc.nat() }), weight: 2 },
  { arbitrary: fc.record({ op: fc.constant('dupArtifact' as const), i: fc.nat() }), weight: 1 },
  {
    arbitrary: fc.record({
      op: fc.constant('newerDraft' as const),
      how: fc.constantFrom('append' as const, 'replace' as const, 'otherJob' as const),
    }),
    weight: 4,
  },
  { arbitrary: fc.record({ op: fc.constant('staleHash' as const), i: fc.nat() }), weight: 1 },
  { arbitrary: fc.record({ op: fc.constant('hop' as const), hop: hopBlock }), weight: 3 },
  { arbitrary: fc.record({ op: fc.constant('replace' as const), value: hostileValue }), weight: 1 },
  {
    arbitrary: fc.record({
      op: fc.constant('schema' as const),
      value: fc.oneof(
        fc.constantFrom<unknown>('handoff.v2', 'handoff.v0', 'handoff.v1 ', 'HANDOFF.V1', 'handoff.v3'),
        hostileValue,
      ),
    }),
    weight: 1,
  },
  {
    arbitrary: fc.record({
      op: fc.constant('extra' as const),
      key: fc.constantFrom('__proto__', 'constructor', 'toJSON', 'pipeline', 'recorded_by_other', 'x'),
      value: hostileValue,
    }),
    weight: 1,
  },
  { arbitrary: fc.constant({ op: 'forgeAck' as const }), weight: 1 },
  {
    arbitrary: fc.record({
      op: fc.constant('bloat' as const),
      where: fc.constantFrom('goal' as const, 'summary' as const, 'uri' as const),
      size: fc.constantFrom(999, 1001, 8001, 47_000, 130_000),
    }),
    weight: 1,
  },
);

/** What a simulated stage does wrong (pure cases); every one of these must be refused by settleHop. */
export const RESULT_FAULTS = [
  'jobId',
  'goal',
  'trace',
  'budgetUp',
  'costNaN',
  'costNegative',
  'costInfinity',
  'costString',
  'evaluator',
  'dropEarlier',
  'rewriteEarlier',
  'wrongType',
  'reuse',
  'hop',
  'ack',
  'invalidPackage',
  'twoArtifacts',
  'constraints',
  'toolsRemoved',
] as const;
export type ResultFault = (typeof RESULT_FAULTS)[number];

export interface FuzzCase {
  /** pure: simulated lookup and stage; activity: the real activities on the store. */
  mode: 'pure' | 'activity';
  job: number;
  /** Relay a job of its own first (activity mode), so its writeback is still unwritten. */
  fresh: boolean;
  at: number;
  /** null: the planned next stage for `at`. */
  stage: { natural: true } | { natural: false; name: unknown };
  mutations: Mutation[];
  delivery:
    | { kind: 'once' }
    | { kind: 'twice' }
    | { kind: 'otherContent' }
    | { kind: 'afterHonest' }
    | { kind: 'concurrent'; n: number };
  reason: string;
  maxHops: number;
  countAtLastHumanDecision?: number;
  /** pure mode: what the duplicate lookup finds, and what the stage returns. */
  prior: 'none' | 'same' | 'different';
  /** `lyingClaim`: the stage answers "already recorded" with its faults applied to the package. */
  stageOutcome: 'honest' | 'sameTwin' | 'differentTwin' | 'lyingClaim' | 'appFailure' | 'throwError';
  faults: ResultFault[];
}

export function caseArb(opts: { activityShare: number }): fc.Arbitrary<FuzzCase> {
  const perMille = Math.round(opts.activityShare * 1000);
  return fc.record({
    mode: fc
      .noBias(fc.integer({ min: 0, max: 999 }))
      .map((n): FuzzCase['mode'] => (n < perMille ? 'activity' : 'pure')),
    job: fc.nat(),
    fresh: fc.boolean(),
    at: fc.oneof({ arbitrary: fc.constant(4), weight: 3 }, { arbitrary: fc.integer({ min: 0, max: 4 }), weight: 4 }),
    stage: fc.oneof(
      { arbitrary: fc.constant({ natural: true as const }), weight: 6 },
      { arbitrary: stageName.map((name) => ({ natural: false as const, name })), weight: 2 },
    ),
    mutations: fc.oneof(
      { arbitrary: fc.constant<Mutation[]>([]), weight: 1 },
      { arbitrary: fc.array(mutationArb, { minLength: 1, maxLength: 4 }), weight: 6 },
    ),
    delivery: fc.oneof(
      { arbitrary: fc.constant({ kind: 'once' as const }), weight: 6 },
      { arbitrary: fc.constant({ kind: 'twice' as const }), weight: 2 },
      { arbitrary: fc.constant({ kind: 'otherContent' as const }), weight: 2 },
      { arbitrary: fc.constant({ kind: 'afterHonest' as const }), weight: 2 },
      { arbitrary: fc.integer({ min: 2, max: 4 }).map((n) => ({ kind: 'concurrent' as const, n })), weight: 2 },
    ),
    reason: fc.oneof(
      { arbitrary: fc.constant('direct delivery'), weight: 8 },
      // stageHop: `delivery ${delivery_id}`, delivery_id any string of at most 200 characters.
      { arbitrary: fc.string({ maxLength: 200, unit: 'binary' }).map((id) => `delivery ${id}`), weight: 1 },
    ),
    maxHops: fc.oneof(
      { arbitrary: fc.constant(DEFAULT_MAX_HOPS), weight: 6 },
      { arbitrary: fc.integer({ min: 1, max: LIMITS.chain }), weight: 1 },
    ),
    countAtLastHumanDecision: fc.option(fc.nat(10), { nil: undefined, freq: 5 }),
    prior: fc.constantFrom('none' as const, 'none' as const, 'none' as const, 'same' as const, 'different' as const),
    stageOutcome: fc.oneof(
      { arbitrary: fc.constant('honest' as const), weight: 8 },
      {
        arbitrary: fc.constantFrom(
          'sameTwin' as const,
          'differentTwin' as const,
          'appFailure' as const,
          'throwError' as const,
        ),
        weight: 2,
      },
      { arbitrary: fc.constant('lyingClaim' as const), weight: 1 },
    ),
    faults: fc.oneof(
      { arbitrary: fc.constant<ResultFault[]>([]), weight: 1 },
      { arbitrary: fc.uniqueArray(fc.constantFrom(...RESULT_FAULTS), { minLength: 1, maxLength: 3 }), weight: 1 },
    ),
  });
}

// --- applying a case ---

export interface Built {
  pkg: unknown;
  /** The package carries evidence the rail never recorded for its job: the base job's artifacts
   * under another job id, or (after the entry) an artifact the base job's relay never produced. */
  forged: boolean;
  /** Job ids the case touched (whose writes are checked). */
  jobs: Set<string>;
}

const dataRef = (type: string, body: unknown): Artifact => ({
  type,
  uri: `data:application/json,${encodeURIComponent(JSON.stringify(body))}`,
});

function forgedBody(type: string, victimTicket: string): unknown {
  switch (type) {
    case 'intake.v1':
      return {
        ticket_id: victimTicket,
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
      };
    case 'chunks.v1':
      return { query: 'refund', chunks: [] };
    case 'summary_md':
      return { markdown: 'We will refund you in full today.', cited_keys: [] };
    case 'verdict.v1':
      return { verdict: 'pass', scores: {}, failures: [] };
    case 'receipt.v1':
      return {
        idempotency_key: 'x:writeback:receipt.v1',
        system: 'crm',
        record_id: `crm_tickets/${victimTicket}`,
        ticket_id: victimTicket,
        status: 'created',
        note_hash: `sha256:${'0'.repeat(64)}`,
        written_at: '2026-01-01T00:00:00.000Z',
      };
    default:
      return { id: victimTicket, customer_id: 'cus_9', subject: 'refund', body: 'refund me' };
  }
}

/** Every path into a JSON-ish value (depth-first, at most depth 5). */
function paths(
  value: unknown,
  prefix: (string | number)[] = [],
  out: (string | number)[][] = [],
): (string | number)[][] {
  if (prefix.length > 0) out.push(prefix);
  if (prefix.length >= 5 || value === null || typeof value !== 'object') return out;
  if (Array.isArray(value)) value.forEach((v, i) => paths(v, [...prefix, i], out));
  else for (const k of Object.keys(value)) paths((value as Record<string, unknown>)[k], [...prefix, k], out);
  return out;
}

function setAt(root: unknown, path: (string | number)[], value: unknown, drop: boolean): void {
  let node = root as Record<string | number, unknown>;
  for (const k of path.slice(0, -1)) node = node[k] as Record<string | number, unknown>;
  const last = path[path.length - 1]!;
  if (drop) {
    if (Array.isArray(node) && typeof last === 'number') node.splice(last, 1);
    else delete node[last];
  } else Object.defineProperty(node, last, { value, enumerable: true, writable: true, configurable: true });
}

const artifactsOf = (pkg: unknown): Artifact[] | undefined => {
  const list = (pkg as { artifacts?: unknown } | null)?.artifacts;
  return Array.isArray(list) ? (list as Artifact[]) : undefined;
};
const isRecord = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

export function buildPackage(
  world: Pick<World, 'pool' | 'nextId'>,
  base: Job,
  at: number,
  mutations: readonly Mutation[],
): Built {
  let pkg: unknown = structuredClone(base.packages[at]!);
  const jobs = new Set([base.id]);
  const other = (n: number) => world.pool[n % world.pool.length]!;
  for (const m of mutations) {
    const arts = artifactsOf(pkg);
    switch (m.op) {
      case 'drop':
      case 'set': {
        const all = paths(pkg);
        if (all.length === 0) break;
        const path = all[m.at % all.length]!;
        setAt(pkg, path, m.op === 'set' ? structuredCloneSafe(m.value) : undefined, m.op === 'drop');
        break;
      }
      case 'budget':
        if (isRecord(pkg)) pkg.budget = { usd_remaining: m.usd, revisions_remaining: m.revisions };
        break;
      case 'flipPass':
        if (isRecord(pkg)) pkg.evaluator = { last_verdict: 'pass', failures: [] };
        break;
      case 'forge': {
        if (!arts) break;
        const ref = dataRef(m.type, forgedBody(m.type, other(m.victim).ticketId));
        if (m.how === 'append') arts.push(ref);
        else if (m.how === 'beforeLast') arts.splice(Math.max(0, arts.length - 1), 0, ref);
        else {
          const i = arts.findIndex((a) => a?.type === m.type);
          if (i >= 0) arts[i] = ref;
          else arts.push(ref);
        }
        break;
      }
      case 'crossJob':
        if (isRecord(pkg)) {
          pkg.job_id = world.nextId('forged');
          jobs.add(pkg.job_id as string);
        }
        break;
      case 'adoptJob':
        if (isRecord(pkg) && other(m.other).id !== base.id) {
          pkg.job_id = other(m.other).id;
          jobs.add(pkg.job_id as string);
        }
        break;
      case 'borrow': {
        const donor = other(m.other);
        const donorArts = donor.packages[4]!.artifacts;
        if (!arts || arts.length === 0 || donor.id === base.id) break;
        const i = m.i % arts.length;
        const from = donorArts[Math.min(i, donorArts.length - 1)]!;
        arts[i] = structuredClone(from);
        break;
      }
      case 'swap':
        if (arts && arts.length > 1) {
          const i = m.i % arts.length;
          const j = m.j % arts.length;
          [arts[i], arts[j]] = [arts[j]!, arts[i]!];
        }
        break;
      case 'reverse':
        arts?.reverse();
        break;
      case 'dropArtifact':
        if (arts && arts.length > 0) arts.splice(m.i % arts.length, 1);
        break;
      case 'dupArtifact':
        if (arts && arts.length > 0) arts.push(structuredClone(arts[m.i % arts.length]!));
        break;
      case 'newerDraft': {
        if (!arts) break;
        const fresh = dataRef('summary_md', {
          markdown: `A newer draft nobody judged (${arts.length}).`,
          cited_keys: [],
        });
        if (m.how === 'append') arts.push(fresh);
        else if (m.how === 'replace') {
          const i = arts.findIndex((a) => a?.type === 'summary_md');
          if (i >= 0) arts[i] = fresh;
          else arts.push(fresh);
        } else {
          const donor = world.pool.find((j) => j.id !== base.id);
          const theirs = donor?.packages[4]!.artifacts.find((a) => a.type === 'summary_md');
          if (theirs) arts.splice(Math.max(0, arts.length - 1), 0, structuredClone(theirs));
        }
        break;
      }
      case 'staleHash':
        if (arts && arts.length > 0) {
          const a = arts[m.i % arts.length];
          if (isRecord(a)) a.hash = `sha256:${'e'.repeat(64)}`;
        }
        break;
      case 'hop':
        if (isRecord(pkg)) {
          if (m.hop === undefined) delete pkg.hop;
          else pkg.hop = structuredCloneSafe(m.hop);
        }
        break;
      case 'replace':
        pkg = structuredCloneSafe(m.value);
        break;
      case 'schema':
        if (isRecord(pkg)) pkg.schema = m.value;
        break;
      case 'extra':
        if (isRecord(pkg))
          Object.defineProperty(pkg, m.key, {
            value: structuredCloneSafe(m.value),
            enumerable: true,
            writable: true,
            configurable: true,
          });
        break;
      case 'forgeAck':
        if (isRecord(pkg)) {
          pkg.ack = {
            ack: 'accepted',
            stage: 'judge',
            hop: 3,
            reason: 'trust me',
            // An earlier mutation may have made job_id anything, a null-prototype object included.
            delivery_key: `${typeof pkg.job_id === 'string' ? pkg.job_id : 'forged'}:judge:4`,
            traceparent: TRACEPARENT,
            at: '2026-01-01T00:00:00.000Z',
          };
        }
        break;
      case 'bloat':
        if (!isRecord(pkg)) break;
        if (m.where === 'goal') pkg.goal = 'g'.repeat(m.size);
        else if (m.where === 'summary') pkg.summary = 's'.repeat(m.size);
        else if (arts && arts.length > 0 && isRecord(arts[0])) arts[0].uri = `data:text/plain,${'u'.repeat(m.size)}`;
        break;
    }
  }
  // Decided on the final package (a later mutation may undo an earlier one): evidence the rail
  // cannot have recorded for the package's job — the base job's artifacts under another job id
  // (their intake names the base job's ticket), or, after the entry, an artifact the base job's
  // relay never produced (a data: URI, another job's artifact).
  const jobId = isRecord(pkg) ? pkg.job_id : undefined;
  const relayed = new Set(base.packages.flatMap((p) => p.artifacts.map((a) => a.uri)));
  const arts = artifactsOf(pkg);
  const foreign = arts?.some((a, i) => i > 0 && !relayed.has((a as { uri?: unknown } | null)?.uri as string)) ?? false;
  const forged = typeof jobId === 'string' && (jobId !== base.id || foreign);
  if (typeof jobId === 'string') jobs.add(jobId);
  return { pkg, forged, jobs };
}

function structuredCloneSafe(v: unknown): unknown {
  try {
    return structuredClone(v);
  } catch {
    return v;
  }
}

// --- simulated facts for pure cases ---

function simulatedDeps(world: World, base: Job, c: FuzzCase, stage: unknown): HopDeps {
  const honest = (card: StageCard, delivered: HandoffV1): StageResult => {
    const i = RELAY.indexOf(card.name as (typeof RELAY)[number]);
    const donor = base.results[i] ?? world.pool[0]!.results[Math.min(Math.max(i, 0), 3)]!;
    const artifact =
      i >= 0 && i < 4
        ? donor.artifact
        : {
            type: card.outputs[0]!,
            uri: `handrail://artifacts/${'9'.repeat(64)}`,
            hash: `sha256:${'9'.repeat(64)}`,
            schema: card.outputs[0]!,
          };
    const evaluator = card.role === 'critic' ? donor.package.evaluator : delivered.evaluator;
    return {
      package: {
        ...structuredClone(delivered),
        artifacts: [...delivered.artifacts, artifact],
        tools_tried: [...delivered.tools_tried, ...(card.tools[0] ? [{ name: card.tools[0].name, ok: true }] : [])],
        evaluator,
      },
      artifact,
      cost_usd: card.nominalCostUsd,
      body: donor.body ?? { markdown: 'A plain note.' },
    };
  };
  return {
    priorDelivery: async ({ package: pkg }) => {
      if (c.prior === 'none' || !pkg) return null;
      const card = (typeof stage === 'string' ? world.pipeline.get(stage) : undefined) ?? world.pipeline.get('intake')!;
      const prior = honest(card, pkg);
      return c.prior === 'different' ? { ...prior, recorded_by_other: 'different' } : prior;
    },
    recordDelivery: async () => undefined,
    // As runStageOnce: a record under the key answers, marked, before any work or check the rail
    // does not make (those before it are the rail's own, which an accepted delivery passes).
    runStage: async (card, work) => {
      if (c.prior !== 'none') return { ...honest(card, work.package), recorded_by_other: c.prior };
      if (c.stageOutcome === 'lyingClaim')
        return { ...applyFaults(honest(card, work.package), work.package, card, c.faults), recorded_by_other: 'same' };
      if (c.stageOutcome === 'appFailure')
        throw ApplicationFailure.nonRetryable('simulated refusal', 'StageInputInvalid');
      if (c.stageOutcome === 'throwError') throw ApplicationFailure.retryable('simulated crash of the worker', 'Error');
      const result = honest(card, work.package);
      if (c.stageOutcome === 'sameTwin') return { ...result, recorded_by_other: 'same' };
      if (c.stageOutcome === 'differentTwin') return { ...result, recorded_by_other: 'different' };
      return applyFaults(result, work.package, card, c.faults);
    },
  };
}

function applyFaults(
  result: StageResult,
  delivered: HandoffV1,
  card: StageCard,
  faults: readonly ResultFault[],
): StageResult {
  const r = structuredClone(result) as Omit<StageResult, 'cost_usd'> & { cost_usd: unknown };
  const p = r.package as HandoffV1 & Record<string, unknown>;
  for (const f of faults) {
    switch (f) {
      case 'jobId':
        p.job_id = `${delivered.job_id}x`;
        break;
      case 'goal':
        p.goal = `${delivered.goal} (rewritten)`;
        break;
      case 'trace':
        p.trace = { traceparent: '00-11111111111111111111111111111111-2222222222222222-01' };
        break;
      case 'budgetUp':
        p.budget = {
          ...p.budget,
          usd_remaining: Math.min(LIMITS.usd, delivered.budget.usd_remaining + 1),
          revisions_remaining: Math.min(LIMITS.revisions, delivered.budget.revisions_remaining + 1),
        };
        break;
      case 'costNaN':
        r.cost_usd = NaN;
        break;
      case 'costNegative':
        r.cost_usd = -0.01;
        break;
      case 'costInfinity':
        r.cost_usd = Infinity;
        break;
      case 'costString':
        r.cost_usd = '0.01';
        break;
      case 'evaluator':
        p.evaluator =
          card.role === 'critic'
            ? { last_verdict: 'none', failures: [] }
            : { last_verdict: delivered.evaluator.last_verdict === 'pass' ? 'fail' : 'pass', failures: ['flipped'] };
        break;
      case 'dropEarlier':
        p.artifacts = p.artifacts.slice(1);
        break;
      case 'rewriteEarlier':
        p.artifacts = p.artifacts.map((a, i) =>
          i === 0 ? { ...a, uri: `handrail://artifacts/${'7'.repeat(64)}`, hash: `sha256:${'7'.repeat(64)}` } : a,
        );
        break;
      case 'wrongType': {
        const artifact = { ...r.artifact, type: 'receipt.v1' === r.artifact.type ? 'verdict.v1' : 'receipt.v1' };
        r.artifact = artifact;
        p.artifacts = [...p.artifacts.slice(0, -1), artifact];
        break;
      }
      case 'reuse': {
        const earlier = delivered.artifacts[0]!;
        r.artifact = { ...earlier };
        p.artifacts = [...delivered.artifacts, { ...earlier }];
        break;
      }
      case 'hop':
        p.hop = { ...delivered.hop!, count: delivered.hop!.count + 1 };
        break;
      case 'ack':
        p.ack = { ...delivered.ack!, reason: 'rewritten by the stage' };
        break;
      case 'invalidPackage':
        p.schema = 'handoff.v0' as 'handoff.v1';
        break;
      case 'twoArtifacts':
        p.artifacts = [
          ...p.artifacts,
          { ...r.artifact, uri: `handrail://artifacts/${'6'.repeat(64)}`, hash: `sha256:${'6'.repeat(64)}` },
        ];
        break;
      case 'constraints':
        p.constraints = [];
        break;
      case 'toolsRemoved':
        p.tools_tried = delivered.tools_tried.length > 0 ? [] : p.tools_tried;
        break;
    }
  }
  return r as StageResult;
}

/** Faults that a delivered package may make a no-op (nothing to remove); the rest always break an invariant. */
function faultBites(f: ResultFault, delivered: HandoffV1): boolean {
  if (f === 'constraints') return delivered.constraints.length > 0;
  if (f === 'toolsRemoved') return delivered.tools_tried.length > 0;
  if (f === 'budgetUp')
    return delivered.budget.usd_remaining < LIMITS.usd || delivered.budget.revisions_remaining < LIMITS.revisions;
  return true;
}

// ---------------------------------------------------------------------------------------------
// 4. Invariants, checked against the store.
// ---------------------------------------------------------------------------------------------

export interface Finding {
  kind: 'false_accept' | 'double_write' | 'missing_ack' | 'invalid_ack' | 'crash' | 'stage_error';
  detail: string;
}

export interface CaseVerdict {
  findings: Finding[];
  acks: AckRecord[];
  plays: number;
  wrote: boolean;
  /** Stage failures by stage and ApplicationFailure type (activity cases). */
  failures: string[];
}

/** Checks every ack of one hop: at least one, each a valid AckRecord. */
export function checkAcks(play: Pick<HopPlay, 'acks' | 'crash' | 'stageError'>, findings: Finding[]): void {
  if (play.crash) {
    findings.push({ kind: 'crash', detail: play.crash.message });
    return;
  }
  if (play.acks.length === 0) findings.push({ kind: 'missing_ack', detail: 'a hop ended with no ack' });
  for (const ack of play.acks) {
    const parsed = AckRecord.safeParse(ack);
    if (!parsed.success)
      findings.push({
        kind: 'invalid_ack',
        detail: `${ack.ack} ack is not an AckRecord: ${parsed.error.issues.map((i) => `${i.path.join('.')} ${i.message}`).join('; ')}`,
      });
  }
  if (play.stageError) findings.push({ kind: 'stage_error', detail: play.stageError });
}

const contentOf = async (store: Store, uri: string): Promise<unknown> => {
  const hex = parseArtifactUri(uri);
  const text = hex ? await store.getContent(hex) : null;
  return text === null ? undefined : (JSON.parse(text) as unknown);
};

/**
 * (a) Every receipt of `jobId` is backed: a judge result recorded for this job, verdict pass, whose
 * artifacts hold a summary the job's draft recorded (the note written is its markdown) and an
 * intake the job's intake recorded (the ticket written is its ticket). (b) ≤ 1 write per key.
 */
export async function checkJobWrites(
  world: Pick<World, 'store' | 'verified'>,
  jobId: string,
  findings: Finding[],
): Promise<number> {
  const writes = await world.store.listWrites(jobId);
  const keys = new Map<string, number>();
  for (const w of writes) keys.set(w.write_key, (keys.get(w.write_key) ?? 0) + 1);
  for (const [key, n] of keys) if (n > 1) findings.push({ kind: 'double_write', detail: `${n} writes under ${key}` });
  for (const receipt of writes) {
    const id = JSON.stringify(receipt);
    if (world.verified.has(id)) continue;
    if (await backed(world.store, jobId, receipt)) world.verified.add(id);
    else
      findings.push({
        kind: 'false_accept',
        detail: `job ${jobId} wrote ${receipt.reference} (${receipt.payload_hash ?? 'no hash'}) with no passing verdict recorded for it over that summary`,
      });
  }
  return writes.length;
}

async function backed(
  store: Store,
  jobId: string,
  receipt: { reference: string; payload_hash?: string },
): Promise<boolean> {
  // In either scope: the job's own rail, or direct (stageHop) deliveries (activities/stage.ts).
  for (const scope of ['rail', 'direct'] as const)
    for (let n = 0; n <= LIMITS.chain + 1; n++) {
      const record = await store.findStageRecord(scopedKey(scope, `${jobId}:judge:${n}`));
      const judged = record?.result.package;
      if (!judged || judged.job_id !== jobId || judged.evaluator.last_verdict !== 'pass') continue;
      const summary = [...judged.artifacts].reverse().find((a) => a.type === 'summary_md');
      const intake = [...judged.artifacts].reverse().find((a) => a.type === 'intake.v1');
      if (!summary || !intake) continue;
      const recordedBy = async (uri: string) =>
        (await store.findRecordedArtifacts(scopedJob(scope, jobId), uri)).map((r) => r.stage);
      if (!(await recordedBy(summary.uri)).includes('draft')) continue;
      if (!(await recordedBy(intake.uri)).includes('intake')) continue;
      const note = (await contentOf(store, summary.uri)) as { markdown?: string } | undefined;
      const ticket = (await contentOf(store, intake.uri)) as { ticket_id?: string } | undefined;
      if (
        typeof note?.markdown === 'string' &&
        `sha256:${sha256Hex(note.markdown)}` === receipt.payload_hash &&
        `crm_tickets/${ticket?.ticket_id}` === receipt.reference
      )
        return true;
    }
  return false;
}

// ---------------------------------------------------------------------------------------------
// 5. Running a case.
// ---------------------------------------------------------------------------------------------

export async function runCase(world: World, c: FuzzCase): Promise<CaseVerdict> {
  const findings: Finding[] = [];
  const plays: HopPlay[] = [];
  const base =
    c.mode === 'activity' && c.fresh
      ? await relayJob(world, world.nextId('fresh'), c.job)
      : world.pool[c.job % world.pool.length]!;
  const built = buildPackage(world, base, c.at, c.mutations);
  const stage = c.stage.natural ? RELAY[c.at] : c.stage.name;
  const req = (pkg: unknown) =>
    hopRequest(world.pipeline, stage, pkg, c.reason, {
      maxHops: c.maxHops,
      countAtLastHumanDecision: c.countAtLastHumanDecision,
      fallbackJobId: `fuzz-wf-${base.id}`,
    });

  if (c.mode === 'pure') {
    const play = await playHop(req(built.pkg), simulatedDeps(world, base, c, stage));
    plays.push(play);
    checkPure(world, c, play, findings);
  } else {
    const deps = world.deps;
    const once = (pkg: unknown) => playHop(req(pkg), deps, world.store);
    switch (c.delivery.kind) {
      case 'once':
        plays.push(await once(built.pkg));
        break;
      case 'twice':
        plays.push(await once(built.pkg), await once(structuredCloneSafe(built.pkg)));
        break;
      case 'afterHonest':
        plays.push(await once(structuredClone(base.packages[c.at]!)), await once(built.pkg));
        break;
      case 'otherContent': {
        plays.push(await once(built.pkg));
        // Same key (same job, same chain length), other content.
        const other = isRecord(built.pkg) ? { ...built.pkg, goal: 'Another goal entirely' } : built.pkg;
        const second = await once(other);
        plays.push(second);
        const firstRan = plays[0]!.ran && plays[0]!.result && !plays[0]!.result.recorded_by_other;
        if (firstRan && second.acks[0]?.ack === 'duplicate')
          findings.push({
            kind: 'false_accept',
            detail: "a different package under a recorded key was answered duplicate (the other package's result)",
          });
        break;
      }
      case 'concurrent':
        plays.push(
          ...(await Promise.all([...Array(c.delivery.n).keys()].map(() => once(structuredCloneSafe(built.pkg))))),
        );
        break;
    }
    // A forged delivery (evidence never recorded for its job) must never write.
    for (const play of plays.slice(c.delivery.kind === 'afterHonest' ? 1 : 0)) {
      if (built.forged && play.wrote)
        findings.push({
          kind: 'false_accept',
          detail: `a forged package made ${play.admitted?.stage} write (ack ${play.acks.map((a) => a.ack).join(', ')})`,
        });
    }
    for (const play of plays) if (play.admitted) built.jobs.add(play.admitted.jobId);
    for (const jobId of built.jobs) await checkJobWrites(world, jobId, findings);
  }
  for (const play of plays) checkAcks(play, findings);
  const failures = plays.flatMap((p) =>
    p.failure ? [/^(\S+ failed: \w+)/.exec(p.failure)?.[1] ?? p.failure.slice(0, 40)] : [],
  );
  return {
    findings,
    acks: plays.flatMap((p) => p.acks),
    plays: plays.length,
    wrote: plays.some((p) => p.wrote),
    failures,
  };
}

/** Pure cases: the gate and the settlement, checked against what the case did. */
function checkPure(world: World, c: FuzzCase, play: HopPlay, findings: Finding[]): void {
  if (play.crash || play.acks.length === 0) return;
  const first = play.acks[0]!;
  const arrived = play.admitted?.arrived;
  const card = play.admitted ? world.pipeline.get(play.admitted.stage) : undefined;
  if (first.ack === 'accepted' || (first.ack === 'duplicate' && play.acks.length === 1 && c.prior !== 'none')) {
    if (!arrived) findings.push({ kind: 'false_accept', detail: `${first.ack} for a package that fails the schema` });
    else if (!card)
      findings.push({
        kind: 'false_accept',
        detail: `${first.ack} for an unregistered stage ${JSON.stringify(play.admitted?.stage)}`,
      });
    else if (card.writes !== null && arrived.evaluator.last_verdict !== 'pass')
      findings.push({ kind: 'false_accept', detail: `writer ${card.name} ${first.ack} without a passing verdict` });
  }
  // A recorded key answers with its record, before (priorDelivery) or in place of the stage's
  // work; a record that breaks an invariant against this delivery is refused instead.
  const answered = { same: 'duplicate', different: 'rejected_conflict' } as const;
  const last = play.acks.at(-1)?.ack;
  if (
    c.prior !== 'none' &&
    (play.ok || play.ran) &&
    last !== answered[c.prior] &&
    !(c.prior === 'same' && last === 'rejected_invariant')
  ) {
    findings.push({
      kind: 'false_accept',
      detail: `ended ${play.acks.at(-1)?.ack ?? 'unacked'}, not ${answered[c.prior]}, although a result was already recorded under the key`,
    });
  }
  // A broken output must never stand: every fault breaks an invariant.
  if (first.ack === 'accepted' && c.stageOutcome === 'honest' && play.ran && arrived && play.ok) {
    const biting = c.faults.filter((f) => faultBites(f, arrived));
    if (biting.length > 0)
      findings.push({
        kind: 'false_accept',
        detail: `settleHop let a stage output with faults [${biting.join(', ')}] stand`,
      });
  }
  if (c.stageOutcome === 'differentTwin' && c.prior === 'none' && play.ran && play.ok)
    findings.push({
      kind: 'false_accept',
      detail: "a twin that recorded a different package was answered as this delivery's result",
    });
  // A stage's claim of a recorded delivery the rail has no record of is a lie, whatever it carries.
  if ((c.stageOutcome === 'sameTwin' || c.stageOutcome === 'lyingClaim') && c.prior === 'none' && play.ran && play.ok) {
    findings.push({
      kind: 'false_accept',
      detail: `a claimed duplicate the rail has no record of stood (${c.stageOutcome}, faults [${c.faults.join(', ')}])`,
    });
  }
}

// ---------------------------------------------------------------------------------------------
// 6. The run.
// ---------------------------------------------------------------------------------------------

export interface FuzzReport {
  seed: number;
  cases: number;
  activity_cases: number;
  hops: number;
  writes: number;
  false_accepts: number;
  crashes: number;
  invalid_acks: number;
  missing_acks: number;
  double_writes: number;
  stage_errors: number;
  acks: Record<string, number>;
  /** Acks of the hops that went through the real activities. */
  activity_acks: Record<string, number>;
  /** Stage failures (ApplicationFailure) of accepted hops, by stage and type. */
  stage_failures: Record<string, number>;
  seconds: number;
  /** First few findings of each kind, with the case that found them. */
  examples: { kind: Finding['kind']; detail: string; index: number; case: FuzzCase }[];
}

export async function runFuzz(opts: {
  cases: number;
  seed: number;
  activityShare: number;
  batch?: number;
  log?: (m: string) => void;
  world?: World;
}): Promise<FuzzReport> {
  const started = Date.now();
  const world = opts.world ?? (await createWorld({ runId: `s${opts.seed}` }));
  const arb = caseArb({ activityShare: opts.activityShare });
  const report: FuzzReport = {
    seed: opts.seed,
    cases: 0,
    activity_cases: 0,
    hops: 0,
    writes: 0,
    false_accepts: 0,
    crashes: 0,
    invalid_acks: 0,
    missing_acks: 0,
    double_writes: 0,
    stage_errors: 0,
    acks: {},
    activity_acks: {},
    stage_failures: {},
    seconds: 0,
    examples: [],
  };
  const batch = opts.batch ?? 1000;
  const shown = new Map<string, number>();
  try {
    for (let from = 0; from < opts.cases; from += batch) {
      const cases = fc.sample(arb, { seed: opts.seed + from, numRuns: Math.min(batch, opts.cases - from) });
      for (const [k, c] of cases.entries()) {
        const verdict = await runCase(world, c);
        report.cases++;
        if (c.mode === 'activity') report.activity_cases++;
        report.hops += verdict.plays;
        if (verdict.wrote) report.writes++;
        for (const ack of verdict.acks) {
          report.acks[ack.ack] = (report.acks[ack.ack] ?? 0) + 1;
          if (c.mode === 'activity')
            report.activity_acks[`${ack.stage}:${ack.ack}`] =
              (report.activity_acks[`${ack.stage}:${ack.ack}`] ?? 0) + 1;
        }
        if (c.mode === 'activity')
          for (const f of verdict.failures) report.stage_failures[f] = (report.stage_failures[f] ?? 0) + 1;
        for (const f of verdict.findings) {
          if (f.kind === 'false_accept') report.false_accepts++;
          else if (f.kind === 'crash') report.crashes++;
          else if (f.kind === 'invalid_ack') report.invalid_acks++;
          else if (f.kind === 'missing_ack') report.missing_acks++;
          else if (f.kind === 'double_write') report.double_writes++;
          else report.stage_errors++;
          const sig = `${f.kind}:${f.detail.replace(/[-\w]*\d[-\w]*/g, '#').slice(0, 80)}`;
          if ((shown.get(sig) ?? 0) < 1 && report.examples.length < 40) {
            shown.set(sig, 1);
            report.examples.push({ ...f, index: from + k, case: c });
          }
        }
      }
      opts.log?.(`${report.cases}/${opts.cases} cases, ${((Date.now() - started) / 1000).toFixed(0)} s`);
    }
  } finally {
    if (!opts.world) await world.close();
  }
  report.seconds = (Date.now() - started) / 1000;
  return report;
}

/** Findings that fail a run: a write, an accept or an answer the rail must not give, or a crash. */
export const failing = (
  r: Pick<FuzzReport, 'false_accepts' | 'crashes' | 'double_writes' | 'missing_acks' | 'invalid_acks'>,
) => r.false_accepts + r.crashes + r.double_writes + r.missing_acks + r.invalid_acks;

const show = (v: unknown) =>
  JSON.stringify(v, (_k, x: unknown) =>
    typeof x === 'number' && !Number.isFinite(x)
      ? String(x)
      : x === undefined
        ? '<undefined>'
        : typeof x === 'string' && x.length > 120
          ? `${x.slice(0, 60)}…(${x.length} chars)`
          : x,
  );

async function main(): Promise<number> {
  const { values: args } = parseArgs({
    options: {
      cases: { type: 'string', default: '100000' },
      seed: { type: 'string', default: String(Date.now() % 1_000_000_007) },
      'activity-share': { type: 'string', default: '0.2' },
    },
  });
  const cases = Number(args.cases);
  const seed = Number(args.seed);
  const activityShare = Number(args['activity-share']);
  console.log(
    `fuzz: seed ${seed} (replay: npm run fuzz -- --cases ${cases} --seed ${seed} --activity-share ${activityShare})`,
  );
  const report = await runFuzz({ cases, seed, activityShare, batch: 2000, log: (m) => console.error(`fuzz: ${m}`) });
  console.log(
    `\ncases            ${report.cases} (${report.activity_cases} through the stage activities, ${report.hops} hops, ${report.writes} with a CRM write)`,
  );
  console.log(`false accepts    ${report.false_accepts}`);
  console.log(`crashes          ${report.crashes}`);
  console.log(`invalid acks     ${report.invalid_acks}`);
  console.log(`missing acks     ${report.missing_acks}`);
  console.log(`double writes    ${report.double_writes}`);
  console.log(`stage errors     ${report.stage_errors} (non-ApplicationFailure throws from a stage)`);
  console.log('acks:');
  for (const [ack, n] of Object.entries(report.acks).sort((a, b) => b[1] - a[1]))
    console.log(`  ${ack.padEnd(20)} ${n}`);
  console.log('acks of the hops through the stage activities (stage:ack):');
  for (const [ack, n] of Object.entries(report.activity_acks).sort((a, b) => b[1] - a[1]))
    console.log(`  ${ack.padEnd(32)} ${n}`);
  console.log('stage failures of accepted hops (normal refusals):');
  for (const [f, n] of Object.entries(report.stage_failures).sort((a, b) => b[1] - a[1]))
    console.log(`  ${f.padEnd(40)} ${n}`);
  console.log(`seconds          ${report.seconds.toFixed(1)}`);
  console.log(`seed             ${report.seed}`);
  for (const e of report.examples)
    console.log(`\n[${e.kind}] case #${e.index}: ${e.detail}\n  ${show(e.case).slice(0, 2000)}`);
  return failing(report) > 0 ? 1 : 0;
}

if (require.main === module) {
  main().then(
    (code) => process.exit(code),
    (err: unknown) => {
      console.error(err);
      process.exit(2);
    },
  );
}
