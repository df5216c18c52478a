/**
 * The deterministic offline drafter: a triage summary built from the intake and the retrieved
 * passages, citing each passage it uses. Revisions read the judge's failure codes and always
 * differ from every rejected draft.
 */
import { failureCode } from '../../contracts';
import { type Chunk, type IntakeV1 } from '../../contracts/pipelines/ticket-artifacts';
import { searchTerms } from '../../src';
import { FAILURE, refundPromise, stems, type Retrieval } from './summary-policy';

export interface DraftInput {
  intake: IntakeV1;
  retrieval: Retrieval;
  /** The judge's failures on the previous draft; empty for a first draft. */
  failures: readonly string[];
  /** Markdown of every earlier (rejected) draft of this job. */
  rejected: readonly string[];
  /** Further facts the summary states, one markdown line each (ticket-hub's brief: the customer's
   * earlier tickets). They must cite nothing: only retrieved chunks may be cited. */
  context?: readonly string[];
}

const NEXT_STEP: Record<string, string> = {
  refund: 'Forward to the billing team for a refund review with the invoice number; the outcome is theirs to decide.',
  billing: 'Check the invoice in the billing console and answer from the cited article.',
  cancellation: 'Confirm which plan and date the customer means, then follow the cited steps.',
  account_access: 'Walk the customer through the cited steps; identity checks stay with the security process.',
  privacy: 'Route to the privacy team; personal-data requests follow the privacy process.',
  data_export: 'Point the customer to the cited export steps and check the date range they used.',
  api: 'Share the cited limits and ask for the failing request ids if the problem continues.',
  shipping: 'Check the order page and the carrier status, then answer from the cited article.',
};
const DEFAULT_NEXT_STEP = 'Answer from the cited articles and close the ticket once the customer confirms.';
/** Long passages are cut at a sentence so a bullet stays a bullet. */
const MAX_BULLET_CHARS = 240;

export function offlineDraft(input: DraftInput): string {
  const codes = new Set(input.failures.map(failureCode));
  const { intake } = input;
  const lines = [
    `## Triage summary: ticket ${intake.ticket_id}`,
    '',
    "**Question** (the customer's words):",
    `> ${intake.question}`,
    `**Intent:** ${intake.intent} · **Risk:** ${intake.risk} · **Sentiment:** ${intake.sentiment} · **Language:** ${intake.language}`,
    ...(input.context ?? []).flatMap((line) => ['', line]),
  ];
  // A revision names what it addresses, so it differs from what was refused even when the refused
  // draft never reached the package (the rail refused it at the draft hop).
  if (input.rejected.length > 0 || input.failures.length > 0) {
    lines.push(
      '',
      `_Revision ${Math.max(1, input.rejected.length)}: addresses ${[...codes].join(', ') || 'the previous verdict'}._`,
    );
  }
  if (codes.has(FAILURE.offTopic)) {
    lines.push(
      '',
      `**Answer in short:** the customer asks about ${searchTerms(intake.question).join(', ')}; the guidance below covers it.`,
    );
  }

  lines.push('', '### What the help center says');
  if (input.retrieval.kind === 'no_hit') {
    lines.push(`- no_match: no help-center article covers this question (${input.retrieval.reason}).`);
  } else {
    // A shorter draft when the judge found the last one too long; otherwise the top three passages.
    const bullets = bulletsFor(input.retrieval.chunks, intake.question, codes.has(FAILURE.tooLong) ? 1 : 3);
    lines.push(...bullets.map(({ sentence, key }) => `- ${sentence} [${key}]`));
  }

  lines.push('', '### Suggested next step');
  if (intake.risk === 'high') {
    const signals = Array.isArray(intake.risk_signals) ? intake.risk_signals.join(', ') : 'see intake';
    lines.push(`High risk (${signals}): a senior agent reviews before anyone replies.`);
  }
  lines.push(
    input.retrieval.kind === 'no_hit'
      ? 'Escalate to a human agent: the answer needs knowledge outside the help center.'
      : (NEXT_STEP[intake.intent] ?? DEFAULT_NEXT_STEP),
  );
  if (intake.open_questions.length > 0) lines.push('', `**Open questions:** ${intake.open_questions.join('; ')}.`);

  const markdown = lines.join('\n');
  // The revision line already makes each revision unique; this guards hand-edited inputs.
  return input.rejected.includes(markdown) ? `${markdown}\n\n_Revision ${input.rejected.length + 1}._` : markdown;
}

/** From each passage, the sentence sharing the most words with the question, never a refund promise. */
function bulletsFor(chunks: readonly Chunk[], question: string, max: number): { sentence: string; key: string }[] {
  const wanted = stems(question);
  const picked: { sentence: string; key: string }[] = [];
  for (const chunk of chunks) {
    if (picked.length >= max) break;
    const sentences = (chunk.text.match(/[^.!?]+[.!?]+|[^.!?]+$/g) ?? [])
      .map((s) => s.trim())
      .filter((s) => s.length > 0 && refundPromise(s) === null && !picked.some((p) => p.sentence === s));
    let best: string | undefined;
    let bestOverlap = -1;
    for (const sentence of sentences) {
      const overlap = [...stems(sentence)].filter((s) => wanted.has(s)).length;
      if (overlap > bestOverlap) {
        best = sentence;
        bestOverlap = overlap;
      }
    }
    if (best) picked.push({ sentence: clipSentence(best), key: chunk.key });
  }
  return picked;
}

function clipSentence(sentence: string): string {
  return sentence.length <= MAX_BULLET_CHARS
    ? sentence
    : `${sentence.slice(0, MAX_BULLET_CHARS - 1).replace(/\s+\S*$/, '')}…`;
}
