/**
 * Rule-based ticket classification for intake: intent, risk, sentiment, language. Deterministic
 * and explainable on purpose (a model only for soft classification, with hard policy
 * checks after); every rule is a keyword table a reviewer can read.
 */
import type { Risk, Sentiment } from '../../contracts/pipelines/ticket-artifacts';

const words = (text: string): string[] =>
  text
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .split(/[^\p{L}\p{N}']+/u)
    .filter(Boolean);

const countMatches = (text: string, patterns: readonly RegExp[]): number =>
  patterns.reduce((n, re) => n + (re.test(text) ? 1 : 0), 0);

/** Intents in priority order: on a tie the earlier (more specific, riskier) one wins. */
const INTENTS: readonly { intent: string; patterns: RegExp[] }[] = [
  { intent: 'refund', patterns: [/\brefund/i, /\bmoney back\b/i, /\breembols/i, /\brembours/i, /\berstatt/i] },
  {
    intent: 'privacy',
    patterns: [/\bgdpr\b/i, /\bdelete (?:my|our|all) (?:data|account)/i, /\berasure\b/i, /\bpersonal data\b/i],
  },
  {
    intent: 'account_access',
    patterns: [
      /\bpassword/i,
      /\blog ?in\b|\bsign ?in\b|\blogin\b/i,
      /\b2fa\b|\btwo[- ]factor\b|\bauthenticator\b/i,
      /\blocked out\b|\blocked\b/i,
      /\bsso\b|\bsaml\b/i,
      /\brecovery codes?\b/i,
    ],
  },
  {
    intent: 'billing',
    patterns: [
      /\binvoices?\b/i,
      /\bcharged?\b|\bcharges\b/i,
      /\bbilling\b/i,
      /\bpayment|\bcard\b/i,
      /\bvat\b|\breceipt\b/i,
      /\bpric(?:e|ing)\b/i,
      /\bchargeback|\bdispute/i,
    ],
  },
  { intent: 'cancellation', patterns: [/\bcancel/i, /\bdowngrade/i, /\bclose (?:my|our) account\b/i] },
  {
    intent: 'data_export',
    patterns: [/\bexports?\b|\bexporting\b/i, /\bcsv\b/i, /\bbackup\b/i, /\bdownload (?:my|our|all)\b/i],
  },
  {
    intent: 'api',
    patterns: [/\bapi\b/i, /\brate limit|\b429\b|\btoo many requests\b/i, /\bwebhooks?\b/i, /\bapi keys?\b|\btoken\b/i],
  },
  {
    intent: 'shipping',
    patterns: [
      /\bshipping\b|\bshipment/i,
      /\blabels?\b/i,
      /\btracking\b|\btrack\b/i,
      /\bparcel|\bpackage\b/i,
      /\bcarrier|\bcustoms\b/i,
      /\bdeliver/i,
    ],
  },
];

export interface IntentGuess {
  intent: string;
  /** Share of the winning intent's rules that matched, 0..1. */
  confidence: number;
}

/** What the customer asks decides the intent; the rest of the ticket only when the question is vague. */
export function askedIntent(question: string, text: string): IntentGuess {
  const asked = classifyIntent(question);
  return asked.intent === 'other' ? classifyIntent(text) : asked;
}

export function classifyIntent(text: string): IntentGuess {
  let best: IntentGuess = { intent: 'other', confidence: 0 };
  let bestHits = 0;
  for (const { intent, patterns } of INTENTS) {
    const hits = countMatches(text, patterns);
    if (hits > bestHits) {
      bestHits = hits;
      best = { intent, confidence: round(hits / patterns.length) };
    }
  }
  return best;
}

/** Signals that make a ticket riskier to handle automatically, with their weight. */
const RISK_SIGNALS: readonly { signal: string; weight: number; pattern: RegExp }[] = [
  { signal: 'legal', weight: 0.6, pattern: /\blawyer|\battorney|\blegal action|\bsue\b|\bcourt\b|\blawsuit/i },
  { signal: 'chargeback', weight: 0.4, pattern: /\bchargeback|\bdispute (?:the|this|a) charge|\bmy bank\b/i },
  { signal: 'security', weight: 0.5, pattern: /\bhacked|\bbreach|\bunauthori[sz]ed|\bstolen|\bfraud/i },
  { signal: 'privacy', weight: 0.3, pattern: /\bgdpr\b|\bpersonal data\b|\berasure\b|\bdelete (?:my|our|all) data\b/i },
  { signal: 'money', weight: 0.2, pattern: /\brefund|\bmoney back\b|\bcharged twice\b|\bovercharged\b/i },
  { signal: 'churn', weight: 0.2, pattern: /\bcancel|\bswitch(?:ing)? to\b|\bcompetitor\b|\bleaving\b/i },
  { signal: 'regulator', weight: 0.4, pattern: /\bregulator|\bombudsman|\bconsumer protection\b/i },
];

export interface RiskAssessment {
  risk: Risk;
  score: number;
  signals: string[];
}

export function assessRisk(text: string, sentimentScore: number): RiskAssessment {
  const hits = RISK_SIGNALS.filter((s) => s.pattern.test(text));
  // An angry customer raises the stakes of any answer; a calm one does not lower them.
  const score = Math.min(1, hits.reduce((sum, s) => sum + s.weight, 0) + (sentimentScore <= -0.5 ? 0.1 : 0));
  const risk: Risk = score >= 0.6 ? 'high' : score >= 0.3 ? 'medium' : 'low';
  return { risk, score: round(score), signals: hits.map((s) => s.signal) };
}

const NEGATIVE = new Set(
  'angry annoyed awful bad broken disappointed disappointing disgusted frustrated frustrating furious horrible incompetent joke mad ridiculous scam shocking terrible unacceptable unhappy upset useless worst wrong hate fed'.split(
    ' ',
  ),
);
const POSITIVE = new Set(
  'appreciate awesome excellent glad great happy helpful love lovely nice perfect pleased thank thanks wonderful'.split(
    ' ',
  ),
);

export interface SentimentScore {
  sentiment: Sentiment;
  /** -1 (negative) .. 1 (positive). */
  score: number;
}

export function scoreSentiment(text: string): SentimentScore {
  const tokens = words(text);
  const negative = tokens.filter((w) => NEGATIVE.has(w)).length;
  const positive = tokens.filter((w) => POSITIVE.has(w)).length;
  // Shouting is negative whatever the words: runs of "!!" and ALL-CAPS words of 4+ letters.
  const shouting = (text.match(/!{2,}/g)?.length ?? 0) + (text.match(/\b[A-Z]{4,}\b/g)?.length ?? 0);
  const total = negative + positive + shouting;
  const score = total === 0 ? 0 : round((positive - negative - shouting) / total);
  const sentiment: Sentiment = score <= -0.25 ? 'negative' : score >= 0.25 ? 'positive' : 'neutral';
  return { sentiment, score };
}

/** Function words that identify a language even in a two-line ticket. */
const LANGUAGE_MARKERS: Record<string, Set<string>> = {
  en: new Set('the and is are my your you with this that have not can how what why please'.split(' ')),
  fr: new Set('le la les est une des pour avec mon mes vous je pas que qui dans bonjour merci'.split(' ')),
  es: new Set('el los las una por para con mi mis usted es pero que hola gracias como cuenta'.split(' ')),
  de: new Set('der die das und ist nicht ich mein meine sie mit für bitte danke wie konto'.split(' ')),
  pt: new Set('o os uma para com meu minha você não que obrigado olá conta como'.split(' ')),
  it: new Set('il gli una per con mio mia non che grazie ciao come sono della'.split(' ')),
  nl: new Set('de het een en is niet ik mijn met voor bedankt hoe jullie'.split(' ')),
};

/** BCP 47 primary tag of the most-marked language, or `und` when nothing stands out. */
export function detectLanguage(text: string): string {
  const tokens = words(text);
  let best = 'und';
  let bestHits = 1; // one shared word ("de", "la") proves nothing
  let tie = false;
  for (const [tag, markers] of Object.entries(LANGUAGE_MARKERS)) {
    const hits = tokens.filter((w) => markers.has(w)).length;
    if (hits > bestHits) {
      best = tag;
      bestHits = hits;
      tie = false;
    } else if (hits === bestHits && best !== 'und') {
      tie = true;
    }
  }
  return tie ? 'und' : best;
}

/** The customer's question: the first sentence ending in `?`, else the subject, else the first sentence. */
export function extractQuestion(subject: string, body: string): string | null {
  const sentences = `${body}`.replace(/\s+/g, ' ').match(/[^.!?\n]+[.!?]*/g) ?? [];
  const asked = sentences.find((s) => s.trim().endsWith('?'));
  const pick = asked ?? (subject.trim() || sentences.find((s) => s.trim().length > 0));
  const question = pick?.replace(/\s+/g, ' ').trim();
  return question ? question.slice(0, 500) : null;
}

function round(n: number): number {
  return Math.round(n * 100) / 100;
}
