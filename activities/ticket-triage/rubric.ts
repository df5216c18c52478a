/**
 * The judge's rubric: four criteria, each scored 0..1, any failure fails the verdict.
 * Hard checks (citations, constraint breaches, length) are always rule-based; whether the
 * summary answers the question may come from a model, otherwise from word overlap.
 */
import type { SummaryMd, VerdictV1 } from '../../contracts';
import type { IntakeV1 } from '../../contracts/pipelines/ticket-artifacts';
import { constraintBreaches, redactPersonalDataFor, PERSONAL_DATA_TOKENS } from '../../src';
import {
  FAILURE,
  SUMMARY_MAX_CHARS,
  SUMMARY_MIN_CHARS,
  citedKeys,
  refundPromise,
  stems,
  type Retrieval,
} from './summary-policy';

/** Share of the question's words the summary must address to count as answering it. */
export const ANSWER_THRESHOLD = 0.5;

export interface AnswerGrade {
  score: number;
  /** Why the grader thinks the question is not answered, when it does not. */
  note?: string;
}

export interface RubricInput {
  summary: SummaryMd;
  intake: IntakeV1;
  retrieval: Retrieval;
  constraints: readonly string[];
  /** A model's grade for "answers the question"; the word-overlap heuristic when absent. */
  answerGrade?: AnswerGrade;
}

export function judgeSummary(input: RubricInput): Pick<VerdictV1, 'verdict' | 'scores' | 'failures'> {
  const { summary, retrieval } = input;
  const failures: string[] = [];
  const scores: Record<string, number> = {};

  // Citations: both the keys in the text and the keys the draft declares must exist.
  const cited = [...new Set([...citedKeys(summary.markdown), ...summary.cited_keys])];
  const known = new Set(retrieval.kind === 'chunks' ? retrieval.chunks.map((c) => c.key) : []);
  const unknown = cited.filter((k) => !known.has(k));
  for (const key of unknown) failures.push(`${FAILURE.citationUnknown}: ${key} is not among the retrieved chunks`);
  if (retrieval.kind === 'chunks' && cited.length === 0)
    failures.push(`${FAILURE.citationMissing}: cites no retrieved chunk`);
  if (retrieval.kind === 'no_hit' && !/\bno_match\b/.test(summary.markdown)) {
    failures.push(`${FAILURE.noMatchMissing}: retrieval found nothing, and the summary does not say no_match`);
  }
  scores.citations =
    cited.length === 0
      ? retrieval.kind === 'no_hit' && unknown.length === 0
        ? 1
        : 0
      : round((cited.length - unknown.length) / cited.length);

  // Policy: never a refund promise; and nothing that breaches the job's enforceable constraints.
  const promise = refundPromise(summary.markdown);
  if (promise) failures.push(`${FAILURE.refundPromise}: ${promise}`);
  const breaches = constraintBreaches(input.constraints, { text: summary.markdown, toolsUsed: [] }).filter(
    (b) => !(promise && b.policy === 'no_refund_promises'),
  );
  for (const b of breaches) failures.push(`${FAILURE.constraintBreach}: ${b.policy}: ${b.breach}`);
  scores.policy = promise || breaches.length > 0 ? 0 : 1;

  const length = summary.markdown.length;
  if (length > SUMMARY_MAX_CHARS)
    failures.push(`${FAILURE.tooLong}: ${length} characters, at most ${SUMMARY_MAX_CHARS}`);
  if (length < SUMMARY_MIN_CHARS)
    failures.push(`${FAILURE.tooShort}: ${length} characters, at least ${SUMMARY_MIN_CHARS}`);
  scores.length = length > SUMMARY_MAX_CHARS || length < SUMMARY_MIN_CHARS ? 0 : 1;

  const grade =
    input.answerGrade ??
    gradeByOverlap(redactPersonalDataFor(input.constraints, input.intake.question), summary.markdown);
  scores.answers_question = round(grade.score);
  if (grade.score < ANSWER_THRESHOLD)
    failures.push(`${FAILURE.offTopic}: ${grade.note ?? 'does not address the question'}`);

  return { verdict: failures.length === 0 ? 'pass' : 'fail', scores, failures };
}

/** Share of the question's words found in the summary, not counting the question quoted verbatim
 * (as the summary quotes it: masked, under redaction, and the mask tokens are not words asked). */
function gradeByOverlap(question: string, markdown: string): AnswerGrade {
  const asked = stems(Object.values(PERSONAL_DATA_TOKENS).reduce((q, token) => q.split(token).join(' '), question));
  if (asked.size === 0) return { score: 1 };
  const said = stems(markdown.split(question).join(' '));
  const missing = [...asked].filter((s) => !said.has(s));
  const score = (asked.size - missing.length) / asked.size;
  return {
    score,
    note: `addresses ${asked.size - missing.length} of ${asked.size} words of the question (missing: ${missing.join(', ')})`,
  };
}

function round(n: number): number {
  return Math.round(n * 100) / 100;
}
