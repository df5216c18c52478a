/**
 * The contract fixtures, built from one valid package so every variant differs from it by
 * exactly the property it is named after. `generate.ts` writes them to `contracts/fixtures/`.
 */
import { HANDOFF_V1, LIMITS, type AckState, type HandoffV1 } from '../../contracts';
import type { TicketArtifactType } from '../../contracts/pipelines/ticket-artifacts';

export type Reason = 'schema' | 'version' | 'size';

export interface FixtureCase {
  file: string;
  /** What `validateHandoff(pkg, { accept: ['handoff.v1'] })` returns. */
  expect: 'accept' | 'reject';
  reason?: Reason;
  /** JSON Pointer of the first reported error. */
  path?: string;
  /** What a plain Draft 2020-12 validator says against `schema/handoff.v1.json`. */
  json_schema: 'accept' | 'reject';
  /** The ack the rail gives when the package reaches it (schema-valid packages only). */
  rail?: AckState;
  note: string;
  body: unknown;
}

/** The reference example package, kept exactly as first written: every later version must still read it. */
export const seed001Example = {
  schema: 'handoff.v1',
  job_id: 'tkt_18422',
  goal: 'Draft internal triage summary; do not send to customer',
  constraints: ['no refund promises', 'cite help center or no_match'],
  artifacts: [{ type: 'summary_md', uri: 's3://ops/tkt_18422/summary.md' }],
  open_questions: ['customer timezone unknown'],
  tools_tried: [{ name: 'tickets.get', ok: true }],
  evaluator: { last_verdict: 'fail', failures: ['citation_missing'] },
  budget: { usd_remaining: 1.2, revisions_remaining: 2 },
  memory_refs: ['customer_id:cus_9'],
  trace: { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' },
  next_hint: 're-retrieve refund policy; rewrite summary',
};

const TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
const hex = (c: string) => c.repeat(64);

/** A package on its way to the judge, with every optional field present. */
export function validPackage(): HandoffV1 {
  return {
    schema: HANDOFF_V1,
    job_id: 'tkt_18422',
    goal: 'Draft internal triage summary; do not send to customer',
    constraints: ['no refund promises', 'cite help center or no_match'],
    artifacts: [
      { type: 'intake.v1', uri: `handrail://artifacts/${hex('a')}`, hash: `sha256:${hex('a')}`, schema: 'intake.v1' },
      { type: 'chunks.v1', uri: `handrail://artifacts/${hex('b')}`, hash: `sha256:${hex('b')}`, schema: 'chunks.v1' },
      { type: 'summary_md', uri: `handrail://artifacts/${hex('c')}`, hash: `sha256:${hex('c')}`, schema: 'summary_md' },
    ],
    open_questions: ['customer timezone unknown'],
    tools_tried: [
      { name: 'tickets.get', ok: true },
      { name: 'kb.search', ok: false, error_code: 'timeout' },
    ],
    evaluator: { last_verdict: 'none', failures: [] },
    budget: { usd_remaining: 1.2, revisions_remaining: 2 },
    memory_refs: ['customer_id:cus_9'],
    trace: { traceparent: TRACEPARENT, tracestate: 'handrail=1' },
    next_hint: 'check the citations against the refund policy',
    hop: { from: 'draft', to: 'judge', reason: 'summary ready', count: 3, chain: ['intake', 'retrieve', 'draft'] },
    summary: 'intake: refund question, low risk.\nretrieve: 3 chunks on refunds.\ndraft: summary citing refund-policy.',
    ack: {
      ack: 'accepted',
      stage: 'draft',
      hop: 2,
      reason: 'schema valid; role matches; budget > 0',
      delivery_key: 'tkt_18422:draft:2',
      traceparent: TRACEPARENT,
      at: '2026-08-14T14:02:00.000Z',
    },
  };
}

const without = (pkg: Record<string, unknown>, key: string) => {
  const copy = { ...pkg };
  delete copy[key];
  return copy;
};

export const REQUIRED_FIELDS = [
  'schema',
  'job_id',
  'goal',
  'constraints',
  'artifacts',
  'open_questions',
  'tools_tried',
  'evaluator',
  'budget',
  'memory_refs',
  'trace',
] as const;

/** A package whose serialised size passes the cap by `extra` bytes of padding in `key`. */
function padded(key: 'summary' | 'x_padding'): HandoffV1 {
  const pkg: Record<string, unknown> = validPackage();
  pkg[key] = '';
  const base = JSON.stringify(pkg).length;
  pkg[key] = 'x'.repeat(LIMITS.packageBytes - base + 1);
  return pkg as HandoffV1;
}

export function fixtureCases(): FixtureCase[] {
  const valid = validPackage();
  const withTrace = (traceparent: string) => ({ ...valid, trace: { traceparent } });
  return [
    {
      file: 'valid.json',
      expect: 'accept',
      json_schema: 'accept',
      rail: 'accepted',
      note: 'every optional field present',
      body: valid,
    },
    {
      file: 'seed-001-example.json',
      expect: 'accept',
      json_schema: 'accept',
      note: 'reference example, unchanged',
      body: seed001Example,
    },
    {
      file: 'unknown-fields.json',
      expect: 'accept',
      json_schema: 'accept',
      rail: 'accepted',
      note: 'fields unknown to v1 (root and nested) are accepted and passed through',
      body: { ...valid, x_priority: 'p1', budget: { ...valid.budget, x_currency: 'USD' } },
    },
    ...REQUIRED_FIELDS.map((field): FixtureCase => ({
      file: `missing-${field}.json`,
      expect: 'reject',
      reason: 'schema',
      path: `/${field}`,
      json_schema: 'reject',
      note: `required field ${field} missing`,
      body: without(valid, field),
    })),
    {
      file: 'duplicate.json',
      expect: 'accept',
      json_schema: 'accept',
      rail: 'duplicate',
      note: 'a second delivery of valid.json to the judge at the same hop: schema-valid; the rail returns the prior artifact',
      body: valid,
    },
    {
      file: 'empty-budget.json',
      expect: 'accept',
      json_schema: 'accept',
      rail: 'rejected_budget',
      note: 'empty wallet is schema-valid; the rail rejects the hop and escalates',
      body: { ...valid, budget: { usd_remaining: 0, revisions_remaining: 0 } },
    },
    {
      file: 'stale-plan.json',
      expect: 'accept',
      json_schema: 'accept',
      rail: 'rejected_invariant',
      note: 'last verdict fail: schema-valid; a revision that reuses the rejected summary breaks a rail invariant',
      body: {
        ...valid,
        evaluator: { last_verdict: 'fail', failures: ['citation_missing'] },
        hop: {
          from: 'judge',
          to: 'draft',
          reason: 'revise',
          count: 4,
          chain: ['intake', 'retrieve', 'draft', 'judge'],
        },
      },
    },
    {
      file: 'wrong-version.json',
      expect: 'reject',
      reason: 'version',
      path: '/schema',
      json_schema: 'reject',
      note: 'unknown schema version',
      body: { ...valid, schema: 'handoff.v0' },
    },
    {
      file: 'next-version.json',
      expect: 'reject',
      reason: 'version',
      path: '/schema',
      json_schema: 'reject',
      note: 'a synthetic handoff.v2 (priority required): a v1-only consumer rejects it; tests register v2 to upgrade into it',
      body: { ...valid, schema: 'handoff.v2', priority: 'normal' },
    },
    {
      file: 'oversize.json',
      expect: 'reject',
      reason: 'size',
      path: '',
      json_schema: 'reject',
      note: `over ${LIMITS.packageBytes} bytes through the summary (also over its ${LIMITS.summary}-character cap)`,
      body: padded('summary'),
    },
    {
      file: 'oversize-unknown-field.json',
      expect: 'reject',
      reason: 'size',
      path: '',
      json_schema: 'accept',
      note: 'over the byte cap through an unknown field: JSON Schema cannot express a total-size cap, every consumer must check it',
      body: padded('x_padding'),
    },
    {
      file: 'bad-traceparent-zero-trace-id.json',
      expect: 'reject',
      reason: 'schema',
      path: '/trace/traceparent',
      json_schema: 'reject',
      note: 'all-zero trace id',
      body: withTrace('00-00000000000000000000000000000000-00f067aa0ba902b7-01'),
    },
    {
      file: 'bad-traceparent-zero-parent-id.json',
      expect: 'reject',
      reason: 'schema',
      path: '/trace/traceparent',
      json_schema: 'reject',
      note: 'all-zero parent id',
      body: withTrace('00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01'),
    },
    {
      file: 'bad-traceparent-uppercase.json',
      expect: 'reject',
      reason: 'schema',
      path: '/trace/traceparent',
      json_schema: 'reject',
      note: 'uppercase hex',
      body: withTrace('00-4BF92F3577B34DA6A3CE929D0E0E4736-00F067AA0BA902B7-01'),
    },
    {
      file: 'bad-traceparent-version-ff.json',
      expect: 'reject',
      reason: 'schema',
      path: '/trace/traceparent',
      json_schema: 'reject',
      note: 'version ff is forbidden',
      body: withTrace('ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01'),
    },
  ];
}

/** One valid body per artifact type, for stage authors and non-TS consumers to test against. */
export const artifactExamples: Record<TicketArtifactType, unknown> = {
  'ticket.raw': {
    id: 'tkt_18422',
    customer_id: 'cus_9',
    subject: 'Refund for double charge?',
    body: 'I was charged twice for my March invoice. Can I get one refunded?',
    channel: 'email',
    received_at: '2026-08-14T13:58:12Z',
  },
  'intake.v1': {
    ticket_id: 'tkt_18422',
    customer_id: 'cus_9',
    question: 'How is a duplicate charge on the March invoice refunded?',
    language: 'en',
    intent: 'billing.refund',
    risk: 'medium',
    sentiment: 'negative',
    open_questions: ['customer timezone unknown'],
  },
  'chunks.v1': {
    query: 'duplicate charge refund',
    chunks: [
      {
        key: 'refund-policy',
        title: 'Refund policy',
        text: 'Duplicate charges are reversed within 5 business days.',
        score: 7.25,
      },
    ],
  },
  'no_hit.v1': { query: 'refund in cryptocurrency', reason: 'no article above the score threshold' },
  summary_md: {
    markdown: '## Triage\nDuplicate charge on the March invoice; reversal per [refund-policy].',
    cited_keys: ['refund-policy'],
  },
  'verdict.v1': { verdict: 'pass', scores: { citations: 1, policy: 1 }, failures: [] },
  'receipt.v1': {
    idempotency_key: 'tkt_18422:writeback:receipt.v1',
    system: 'crm',
    record_id: 'note_501',
    ticket_id: 'tkt_18422',
    status: 'created',
    note_hash: `sha256:${hex('d')}`,
    written_at: '2026-08-14T14:03:00.000Z',
  },
  'account_history.v1': {
    customer_id: 'cus_9',
    tickets: [
      {
        ticket_id: 'tkt_17990',
        status: 'triaged',
        note_excerpt:
          "## Triage summary: ticket tkt_17990 **Question** (the customer's words): > How do I export my invoices?",
        updated_at: '2026-07-02T10:20:00.000Z',
      },
    ],
    count: 1,
    more: false,
  },
};
