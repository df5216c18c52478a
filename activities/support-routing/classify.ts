/**
 * classify: `ticket.raw` (the JSON ticket of a job request) → `classification.v1`, the facts the
 * routing table reads. Every field comes from a fixed rule a reviewer can read: intake's keyword
 * rules for intent, sentiment and language, and the complexity rule below. Ids are taken from the
 * ticket or not at all, as intake does.
 */
import { z } from 'zod';
import { assistantMessage, type HandoffV1 } from '../../contracts';
import { IntakeV1, TicketRaw } from '../../contracts/pipelines/ticket-artifacts';
import { CLASSIFICATION, classifyStage } from '../../contracts/pipelines/support-routing';
import {
  type Store,
  readArtifactBody,
  requireArtifact,
  writeArtifact,
  entryFieldsMissing,
  type StageOutput,
  type StageTurn,
} from '../../src';
import { askedIntent, detectLanguage, extractQuestion, scoreSentiment } from '../ticket-triage/ticket-rules';

export const MAX_COMPLEXITY = 10;

/** `classification.v1`. Sentiment is 0 (furious) .. 1 (delighted); complexity an integer 0..10. */
export const Classification = IntakeV1.pick({
  ticket_id: true,
  customer_id: true,
  question: true,
  language: true,
  intent: true,
}).extend({
  intent_confidence: z.number().min(0).max(1),
  sentiment: z.number().min(0).max(1),
  complexity: z.int().min(0).max(MAX_COMPLEXITY),
  complexity_signals: z.array(z.string()),
});
export type Classification = z.infer<typeof Classification>;

/** Terms that make a ticket technical; each counts once, however often it appears. */
const TECHNICAL_TERMS: readonly { term: string; pattern: RegExp }[] = [
  { term: 'api', pattern: /\bapi\b|\bendpoints?\b|\bsdk\b/i },
  { term: 'webhook', pattern: /\bwebhooks?\b/i },
  { term: 'sso', pattern: /\bsso\b|\bsaml\b|\boauth\b|\bscim\b/i },
  { term: 'error code', pattern: /\b(?:error|http|status)(?: code)?:? ?[45]\d\d\b/i },
  { term: 'integration', pattern: /\bintegrations?\b|\bplugins?\b/i },
  { term: 'timeout', pattern: /\btime ?outs?\b|\btimed out\b|\blatency\b/i },
  { term: 'data migration', pattern: /\bdatabase\b|\bmigrat|\bcsv\b|\bimports?\b/i },
  { term: 'network', pattern: /\bdns\b|\bssl\b|\btls\b|\bcertificates?\b|\bproxy\b|\bfirewall\b/i },
  { term: 'stack trace', pattern: /\bstack ?trace\b|\bexceptions?\b|\bcrash/i },
];

export interface Complexity {
  complexity: number;
  signals: string[];
}

/**
 * 0..10, three capped parts so no single one decides: length (a point per 400 characters, at most
 * 3), questions beyond the first (a point each, at most 3), technical terms (a point each, at most 4).
 */
export function scoreComplexity(text: string): Complexity {
  const lengthPoints = Math.min(3, Math.floor(text.length / 400));
  const questions = text.match(/\?+/g)?.length ?? 0;
  const questionPoints = Math.min(3, Math.max(0, questions - 1));
  const terms = TECHNICAL_TERMS.filter((t) => t.pattern.test(text)).map((t) => t.term);
  const termPoints = Math.min(4, terms.length);
  return {
    complexity: lengthPoints + questionPoints + termPoints,
    signals: [
      ...(lengthPoints > 0 ? [`${text.length} characters`] : []),
      ...(questions > 1 ? [`${questions} questions`] : []),
      ...terms,
    ],
  };
}

/** scoreSentiment's -1..1 on the routing table's 0..1 scale. */
export function sentimentLevel(score: number): number {
  return Math.round(((score + 1) / 2) * 100) / 100;
}

export async function runClassify(store: Store, pkg: HandoffV1, turn: StageTurn): Promise<StageOutput> {
  const ref = requireArtifact(pkg, classifyStage.name, 'ticket.raw');
  // Ids are checked below, so that a missing one is an open question rather than a schema error.
  const ticket = await readArtifactBody(store, ref, TicketRaw.omit({ id: true, customer_id: true }));
  const question = extractQuestion(ticket.subject, ticket.body);
  const gaps = [
    ...idGaps(ticket.id, 'ticket_id'),
    ...idGaps(ticket.customer_id, 'customer_id'),
    ...(question === null ? ['question missing: the ticket has no subject and no body'] : []),
  ];
  if (gaps.length > 0 || question === null) throw entryFieldsMissing(classifyStage.name, pkg, gaps);
  const ticketId = ticket.id as string;
  const customerId = ticket.customer_id as string;

  const text = `${ticket.subject}\n${ticket.body}`;
  // The ticket supplies the prompt of the job's first turn.
  await turn.prompt({ question: text });
  const intent = askedIntent(question, text);
  const complexity = scoreComplexity(text);
  const body: Classification = {
    ticket_id: ticketId,
    customer_id: customerId,
    question,
    intent: intent.intent,
    intent_confidence: intent.confidence,
    sentiment: sentimentLevel(scoreSentiment(text).score),
    complexity: complexity.complexity,
    complexity_signals: complexity.signals,
    language: detectLanguage(text),
  };
  turn.reply(
    assistantMessage(
      `intent ${body.intent}, sentiment ${body.sentiment}, complexity ${body.complexity}/10, language ${body.language}`,
    ),
  );
  return {
    artifact: await writeArtifact(store, CLASSIFICATION, Classification, body),
    body,
    cost_usd: classifyStage.nominalCostUsd,
    tools_tried: [{ name: 'tickets.read', ok: true }],
    memory_refs: [`customer_id:${customerId}`, `ticket_id:${ticketId}`],
    summary: `intent ${body.intent}, sentiment ${body.sentiment}, complexity ${body.complexity}/10, language ${body.language}`,
  };
}

function idGaps(value: unknown, field: string): string[] {
  if (value === undefined || value === null || (typeof value === 'string' && value.trim() === ''))
    return [`${field} missing: the ticket does not name one`];
  if (!TicketRaw.shape.id.safeParse(value).success)
    return [`${field} ${JSON.stringify(value).slice(0, 60)} is malformed`];
  return [];
}
