/**
 * Constraint policies the rail can enforce mechanically at every hop, not only the
 * first and last. A job's constraints are free text; a
 * policy recognises the constraints it implements and checks a stage's output for breaches.
 * Constraints no policy recognises still travel on every package, for the critic and the human.
 *
 * Pure functions: imported by workflow code (the rail) and by stages (a critic's rubric).
 */
import { findPersonalData, maskPersonalData, obscurePersonalDatum } from './personal-data';

export interface StageOutputView {
  /** The output artifact body as text (markdown, or JSON of a structured body). */
  text: string;
  /** Tool names this stage reported using (new entries of `tools_tried`). */
  toolsUsed: readonly string[];
}

export interface ConstraintPolicy {
  id: string;
  /** Does this policy implement the given constraint text? */
  implements(constraint: string): boolean;
  /** A short description of the breach, or null when the output complies. */
  breach(output: StageOutputView): string | null;
}

// A promise is a commitment to refund ("we will refund you", "your refund has been approved"),
// not a mention of the refund policy ("refunds are handled by billing").
const REFUND_PROMISE = [
  /\b(?:we|i)(?:'ll| will| shall| can| are going to|'re going to| have|'ve)\s+(?:now\s+|gladly\s+|happily\s+|already\s+)?(?:issue|process|give|send|grant|approve)(?:e?d)?\b[^.\n]{0,40}\brefund/i,
  /\b(?:we|i)(?:'ll| will| shall| are going to|'re going to| have|'ve)\s+(?:fully\s+|now\s+|already\s+)?refund(?:ed)?\b/i,
  /\byou(?:'ll| will)\s+(?:be\s+)?(?:fully\s+)?(?:refunded|receive\s+(?:a|your)\s+(?:full\s+)?refund|get\s+(?:a|your)\s+(?:full\s+)?refund)/i,
  // Past tense states a fact ("refund was issued"); present tense is policy ("a refund is issued
  // after review") unless it is the reader's own refund.
  /\b(?:your\s+)?refund\s+(?:has\s+been|was)\s+(?:approved|issued|processed|granted)|\byour\s+refund\s+is\s+(?:approved|issued|processed|granted|on its way)/i,
  /\bguarantee(?:d)?\s+(?:a\s+|you\s+a\s+)?(?:full\s+)?refund/i,
];

/** The note's own words: a markdown blockquote (`> …`) is a quotation — the requester's words, which
 * a note may cite ("Your refund has been approved, right?") without promising anything. */
export function authoredLines(text: string): string {
  return text
    .split('\n')
    .filter((line) => !/^\s*>/.test(line))
    .join('\n');
}

// "redact personal data", "mask PII", "remove email addresses", "no personal data in notes".
const REDACT_PERSONAL_DATA = new RegExp(
  [
    String.raw`\b(?:redact|mask|remove|strip|scrub|hide|anonymi[sz]e|obfuscate)\b.*\b(?:pii|personal(?:ly identifiable)?\s+(?:data|information|info|details)|contact details|e-?mail(?:\s+address)?(?:e?s)?|phone(?:\s+number)?s?|card(?:\s+number)?s?)\b`,
    String.raw`\b(?:no|without|never (?:include|write|share|store)|do not (?:include|write|share|store))\b.*\b(?:pii|personal(?:ly identifiable)?\s+(?:data|information|info|details))\b`,
  ].join('|'),
  'i',
);

// Tools that message someone outside: `email.send`, `sms_reply`, any `<channel>.message`.
const OUTWARD_SEND_TOOLS = /^(?:(?:email|mail|sms|chat)[._-]?|[a-z]+[._-])(?:send|reply|message)/i;

export const CONSTRAINT_POLICIES: readonly ConstraintPolicy[] = [
  {
    id: 'no_refund_promises',
    implements: (c) =>
      /\bno\b.*\brefund promises?\b|\bnever promise (?:a )?refunds?\b|\bdo not promise (?:a )?refunds?\b/i.test(c),
    breach: ({ text }) => {
      const own = authoredLines(text);
      const hit = REFUND_PROMISE.map((re) => re.exec(own)).find(Boolean);
      return hit ? `promises a refund: "${hit[0].slice(0, 80)}"` : null;
    },
  },
  {
    id: 'no_outward_send',
    implements: (c) => /\bdo not send\b|\bno (?:\w+ )?(?:email|send|contact)\b|\binternal only\b/i.test(c),
    breach: ({ toolsUsed }) => {
      const sent = toolsUsed.find((t) => OUTWARD_SEND_TOOLS.test(t));
      return sent ? `used outward-facing tool ${sent}` : null;
    },
  },
  {
    id: 'redact_personal_data',
    implements: (c) => REDACT_PERSONAL_DATA.test(c),
    // Quotes count: the requester's email in a blockquote is still personal data in the note. The
    // breach names the datum obscured, since breach messages end up in acks and history.
    breach: ({ text }) => {
      const [first, ...more] = findPersonalData(text);
      if (!first) return null;
      return `leaves personal data unmasked: ${obscurePersonalDatum(first)}${more.length > 0 ? ` (and ${more.length} more)` : ''}`;
    },
  },
];

/** The policies that apply to a job's constraints (a constraint may match several). */
export function policiesFor(constraints: readonly string[]): ConstraintPolicy[] {
  return CONSTRAINT_POLICIES.filter((p) => constraints.some((c) => p.implements(c)));
}

/** `text` as a stage writes it under the job's constraints: personal data masked when one of them
 * asks for that (redact_personal_data), unchanged otherwise. */
export function redactPersonalDataFor(constraints: readonly string[], text: string): string {
  return masksPersonalData(constraints) ? maskPersonalData(text) : text;
}

/** Whether the job's constraints ask for personal data to be masked (redact_personal_data). */
export function masksPersonalData(constraints: readonly string[]): boolean {
  return policiesFor(constraints).some((p) => p.id === 'redact_personal_data');
}

/** Every breach of the job's enforceable constraints by one stage output. */
export function constraintBreaches(
  constraints: readonly string[],
  output: StageOutputView,
): { policy: string; breach: string }[] {
  return policiesFor(constraints).flatMap((p) => {
    const breach = p.breach(output);
    return breach ? [{ policy: p.id, breach }] : [];
  });
}
