/**
 * Caps against hostile or runaway input. A package over a cap is rejected, never truncated.
 *
 * The total package cap sits far below Temporal's 2 MB payload limit (a package travels in
 * workflow inputs, results and history many times per job); the summary cap keeps the
 * accumulated summary near a ~2,000-token budget (~4 chars per token).
 */
const SHORT_TEXT = 500;

/** What the rail puts before a `revise` decision's note when it files it as an evaluator failure. */
export const HUMAN_NOTE_PREFIX = 'human: ';

export const LIMITS = {
  /** UTF-8 bytes of the JSON-serialised package, unknown fields included. */
  packageBytes: 128 * 1024,
  /** ids: job_id, entry ids, delivery keys, record ids. */
  id: 128,
  /** stage names, artifact types, schema names, tool names, error codes. */
  name: 64,
  /** one constraint, question, failure, hint, reason. */
  shortText: SHORT_TEXT,
  /** a decision's note: `HUMAN_NOTE_PREFIX + note` must still fit one failure item. */
  decisionNote: SHORT_TEXT - HUMAN_NOTE_PREFIX.length,
  goal: 1_000,
  summary: 8_000,
  /** Characters of summary a stage's worker leaves on the package it emits: past them the oldest
   * segments move to the store behind one reference (activities/summary.ts), so the package does
   * not grow with the job. `summary` stays the cap a package may carry (other workers, older ones). */
  summaryKept: 512,
  /** a URI; data: URIs carry the job's entry on the first package. */
  uri: 48_000,
  traceparent: 256,
  tracestate: 512,
  /** items in one list (constraints, questions, tools tried, chunks, ...). */
  listItems: 64,
  /** Entries of the hop chain a package carries: the newest ones. A longer chain keeps what
   * cycle detection and revisit bounds need of its older entries in `hop.earlier`. */
  chain: 128,
  /** Transfers a job may count (`hop.count`) and the highest hop cap a request may set. */
  hops: 100_000,
  /** Artifacts a package carries before the rail moves superseded ones off it (`earlier_artifacts`);
   * the rest of `listItems` is room for the hops and fan-outs before the next fold. */
  artifactsKept: 32,
  /** URIs and hashes of outputs moved off a package that a job remembers (the newest), so a
   * revision cannot repeat one (`no_artifact_reuse`). */
  movedOutputs: 512,
  /** acks kept on a job result. */
  acks: 256,
  /** rubric scores in one verdict. */
  scores: 32,
  /** errors carried in a rejected_schema ack: short enough to travel in the package. */
  ackErrors: 10,
  markdown: 16_000,
  /** Dollars in any amount (a wallet, a top-up, spent): keeps every figure finite and the
   * micro-dollar wallet arithmetic exact (at most 1e12 micro-dollars, far below 2^53). */
  usd: 1_000_000,
  /** Revisions in a wallet or a top-up. */
  revisions: 1_000,
} as const;

/** The wallet's unit is one micro-dollar: amounts are compared and summed in whole units. */
export const MICROS_PER_USD = 1_000_000;
