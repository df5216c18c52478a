/**
 * The specialists: `classification.v1` → `summary_md`, an internal note from a fixed template per
 * specialist (offline, no model). The note says who took the ticket over and why (the
 * receiving agent shows it has the context), restates the question, and never commits the
 * billing team to a refund.
 */
import { z } from 'zod';
import { assistantMessage, SummaryMd, type HandoffV1, type StageCard } from '../../contracts';
import {
  redactPersonalDataFor,
  type Store,
  readArtifactBody,
  requireArtifact,
  writeArtifact,
  type StageOutput,
  type StageTurn,
} from '../../src';
import { CLASSIFICATION, classifyStage } from '../../contracts/pipelines/support-routing';
import { Classification } from './classify';

export type Specialist = 'billing' | 'escalation' | 'senior' | 'multilingual' | 'general';

/** `summary_md` as the specialists write it: the note plus who wrote it (crm-note reads that). */
export const SpecialistNote = SummaryMd.extend({ specialist: z.string() });
export type SpecialistNote = z.infer<typeof SpecialistNote>;

const languageNames = new Intl.DisplayNames(['en'], { type: 'language' });

/** Each specialist's title and what it tells the agent who replies. */
const TEMPLATES: Record<Specialist, { title: string; advice(c: Classification): string[] }> = {
  billing: {
    title: 'Billing',
    advice: () => [
      'Check the invoice, the charge history and the payment method on file before replying.',
      'Refund decisions belong to the billing team under the refund policy; the reply commits to no outcome.',
    ],
  },
  escalation: {
    title: 'Escalation',
    advice: (c) => [
      `The customer is upset (sentiment ${c.sentiment.toFixed(2)} on 0..1): a human agent replies personally.`,
      'Acknowledge the frustration first, then answer the question; commit to nothing the team has not decided.',
    ],
  },
  senior: {
    title: 'Senior support',
    advice: (c) => [
      `Complex ticket (complexity ${c.complexity}/10: ${c.complexity_signals.join(', ') || 'no single signal'}).`,
      'Answer every question in turn and reproduce any technical issue before replying.',
    ],
  },
  multilingual: {
    title: 'Language specialist',
    advice: (c) => [
      `The customer writes in ${languageNames.of(c.language) ?? c.language} (${c.language}): reply in that language.`,
      'Keep product names, amounts and dates exactly as the customer wrote them.',
    ],
  },
  general: {
    title: 'General support',
    advice: () => [
      'Answer from the help center, and hand over to a specialist if the reply needs an account or billing change.',
    ],
  },
};

export function specialistNote(specialist: Specialist, c: Classification): string {
  const { title, advice } = TEMPLATES[specialist];
  return [
    `## ${title}: ticket ${c.ticket_id} (customer ${c.customer_id})`,
    '',
    `Taken over from ${classifyStage.name}: intent ${c.intent}, sentiment ${c.sentiment.toFixed(2)}, complexity ${c.complexity}/10, language ${c.language}.`,
    '',
    "**Question** (the customer's words):",
    `> ${c.question}`,
    '',
    ...advice(c).map((line) => `- ${line}`),
  ].join('\n');
}

export async function runSpecialist(
  store: Store,
  card: StageCard & { name: Specialist },
  pkg: HandoffV1,
  turn: StageTurn,
): Promise<StageOutput> {
  const classification = await readArtifactBody(store, requireArtifact(pkg, card.name, CLASSIFICATION), Classification);
  await turn.prompt({ question: `Write the ${card.name} note for ticket ${classification.ticket_id}.` });
  const markdown = redactPersonalDataFor(pkg.constraints, specialistNote(card.name, classification));
  const body: SpecialistNote = { markdown, cited_keys: [], specialist: card.name };
  turn.reply(assistantMessage(body.markdown));
  const summary = `${TEMPLATES[card.name].title} note for ticket ${classification.ticket_id}, taken over from ${classifyStage.name} (intent ${classification.intent}, sentiment ${classification.sentiment.toFixed(2)}, complexity ${classification.complexity}/10, language ${classification.language})`;
  return {
    artifact: await writeArtifact(store, 'summary_md', SpecialistNote, body),
    body,
    cost_usd: card.nominalCostUsd,
    summary,
  };
}
