/**
 * intake: the raw ticket (`ticket.raw`, JSON or a plain-text email) → `intake.v1`.
 * Ids are taken from the ticket or not at all: a missing or malformed id fails the stage closed
 * with the gap listed as an open question, never filled with a guess.
 */
import { assistantMessage, type HandoffV1 } from '../../contracts';
import { IntakeV1, TICKET_LIMITS, TicketRaw } from '../../contracts/pipelines/ticket-artifacts';
import { intakeStage } from '../../contracts/pipelines/ticket-triage';
import {
  type Store,
  readArtifactText,
  requireArtifact,
  writeArtifact,
  entryFieldsMissing,
  type StageOutput,
  type StageTurn,
  stageFailure,
} from '../../src';
import { askedIntent, assessRisk, detectLanguage, extractQuestion, scoreSentiment } from './ticket-rules';

/** The ticket as read, before anything is checked: ids may be absent or malformed. */
export interface ReadTicket {
  id?: string;
  customer_id?: string;
  subject: string;
  body: string;
  channel?: string;
}

export async function runIntake(store: Store, pkg: HandoffV1, turn: StageTurn): Promise<StageOutput> {
  const ref = requireArtifact(pkg, intakeStage.name, 'ticket.raw');
  const raw = await readArtifactText(store, ref);
  const ticket = parseTicket(raw.text, raw.mediaType);

  const question = extractQuestion(ticket.subject, ticket.body);
  const missing = missingFields(ticket, question);
  if (missing.length > 0 || question === null) throw entryFieldsMissing(intakeStage.name, pkg, missing);
  const ticketId = ticket.id as string;
  const customerId = ticket.customer_id as string;

  const text = `${ticket.subject}\n${ticket.body}`;
  // The ticket supplies the prompt of the job's first turn.
  await turn.prompt({ question: text });
  const intent = askedIntent(question, text);
  const sentiment = scoreSentiment(text);
  const risk = assessRisk(text, sentiment.score);
  const language = detectLanguage(text);
  const openQuestions = [
    ...((intent.intent === 'refund' || intent.intent === 'billing') &&
    !/\binv[-_ #]?\d+|\binvoice (?:number|no\.?|#)\s*\S*\d/i.test(text)
      ? ['invoice number not given']
      : []),
    ...(language === 'und' ? ['customer language undetermined'] : []),
  ];

  const body: IntakeV1 = {
    ticket_id: ticketId,
    customer_id: customerId,
    question,
    language,
    intent: intent.intent,
    risk: risk.risk,
    sentiment: sentiment.sentiment,
    open_questions: openQuestions,
    intent_confidence: intent.confidence,
    risk_score: risk.score,
    risk_signals: risk.signals,
    sentiment_score: sentiment.score,
    ...(ticket.channel ? { channel: ticket.channel } : {}),
  };
  turn.reply(
    assistantMessage(
      `intent ${body.intent}, risk ${body.risk}, sentiment ${body.sentiment}, language ${body.language}${openQuestions.length > 0 ? `; open questions: ${openQuestions.join('; ')}` : ''}`,
    ),
  );
  return {
    artifact: await writeArtifact(store, 'intake.v1', IntakeV1, body),
    body,
    cost_usd: intakeStage.nominalCostUsd,
    tools_tried: [{ name: 'tickets.read', ok: true }],
    open_questions: openQuestions,
    memory_refs: [`customer_id:${customerId}`, `ticket_id:${ticketId}`],
    // Not the question: the customer's words stay in the store (intake.v1), off every package.
    summary: `intent ${body.intent}, risk ${body.risk}, language ${body.language}${openQuestions.length > 0 ? `, open: ${openQuestions.join('; ')}` : ''}`,
  };
}

function missingFields(ticket: ReadTicket, question: string | null): string[] {
  const gaps: string[] = [];
  for (const [field, value] of [
    ['ticket_id', ticket.id],
    ['customer_id', ticket.customer_id],
  ] as const) {
    if (value === undefined || value.trim() === '') gaps.push(`${field} missing: the ticket does not name one`);
    else if (!TicketRaw.shape.id.safeParse(value).success)
      gaps.push(`${field} ${JSON.stringify(value.slice(0, 60))} is malformed`);
  }
  if (question === null) gaps.push('question missing: the ticket has no subject and no body');
  return gaps;
}

/** A JSON ticket (`application/json`, or text that is a JSON object) or a plain-text email. */
function parseTicket(text: string, mediaType: string): ReadTicket {
  const ticket =
    mediaType === 'application/json' || text.trimStart().startsWith('{')
      ? parseJsonTicket(text)
      : parseEmailTicket(text);
  if (ticket.subject.length > TICKET_LIMITS.subject) {
    throw stageFailure(
      'ArtifactInvalid',
      `ticket.raw: subject is ${ticket.subject.length} characters, over the ${TICKET_LIMITS.subject} cap`,
    );
  }
  if (ticket.body.length > TICKET_LIMITS.body) {
    throw stageFailure(
      'ArtifactInvalid',
      `ticket.raw: body is ${ticket.body.length} characters, over the ${TICKET_LIMITS.body} cap`,
    );
  }
  return ticket;
}

function parseJsonTicket(text: string): ReadTicket {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw stageFailure('ArtifactInvalid', 'ticket.raw: not valid JSON');
  }
  if (json === null || typeof json !== 'object' || Array.isArray(json))
    throw stageFailure('ArtifactInvalid', 'ticket.raw: not a JSON object');
  const fields = json as Record<string, unknown>;
  const optionalText = (name: string): string | undefined => {
    const value = fields[name];
    if (value === undefined || value === null) return undefined;
    if (typeof value !== 'string') throw stageFailure('ArtifactInvalid', `ticket.raw: ${name} must be a string`);
    return value;
  };
  return {
    id: optionalText('id'),
    customer_id: optionalText('customer_id'),
    subject: optionalText('subject') ?? '',
    body: optionalText('body') ?? '',
    channel: optionalText('channel'),
  };
}

/** Header names that carry the ids in an email ticket (the helpdesk's forwarding rule adds them). */
const ID_HEADERS: Record<string, 'id' | 'customer_id'> = {
  'x-ticket-id': 'id',
  'ticket-id': 'id',
  'x-customer-id': 'customer_id',
  'customer-id': 'customer_id',
};

function parseEmailTicket(text: string): ReadTicket {
  const normalized = text.replace(/\r\n/g, '\n');
  const split = normalized.indexOf('\n\n');
  const head = split === -1 ? normalized : normalized.slice(0, split);
  const headerLines = head.split('\n');
  // Without an RFC 5322 header block the whole text is the body, and no ids can be read from it.
  const hasHeaders = headerLines.every((line) => /^[A-Za-z][A-Za-z0-9-]*:\s?/.test(line) || /^[ \t]/.test(line));
  const ticket: ReadTicket = {
    subject: '',
    body: hasHeaders ? (split === -1 ? '' : normalized.slice(split + 2)) : normalized,
    channel: 'email',
  };
  if (!hasHeaders) return { ...ticket, body: ticket.body.trim() };
  for (const line of headerLines) {
    const at = line.indexOf(':');
    if (at < 0 || /^[ \t]/.test(line)) continue; // folded continuation lines carry no id
    const name = line.slice(0, at).trim().toLowerCase();
    const value = line.slice(at + 1).trim();
    if (name === 'subject') ticket.subject = value;
    const idField = ID_HEADERS[name];
    if (idField) ticket[idField] = value;
  }
  return { ...ticket, body: ticket.body.trim() };
}
