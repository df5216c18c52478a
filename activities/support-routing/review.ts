/**
 * review (the critic): `summary_md` → `verdict.v1`, and the package's evaluator state. Rule-based
 * and tool-less: the note must be within length, restate the question, promise no refund and
 * breach none of the job's enforceable constraints.
 */
import { SummaryMd, VerdictV1, type HandoffV1 } from '../../contracts';
import {
  constraintBreaches,
  redactPersonalDataFor,
  type Store,
  readArtifactBody,
  requireArtifact,
  writeArtifact,
  type StageOutput,
} from '../../src';
import { CLASSIFICATION, reviewStage } from '../../contracts/pipelines/support-routing';
import { FAILURE, SUMMARY_MAX_CHARS, SUMMARY_MIN_CHARS, refundPromise } from '../ticket-triage/summary-policy';
import { verdictSummary } from '../ticket-triage/judge';
import { Classification } from './classify';

export function reviewNote(
  markdown: string,
  question: string,
  constraints: readonly string[],
): Pick<VerdictV1, 'verdict' | 'scores' | 'failures'> {
  const failures: string[] = [];
  const length = markdown.length;
  if (length > SUMMARY_MAX_CHARS)
    failures.push(`${FAILURE.tooLong}: ${length} characters, at most ${SUMMARY_MAX_CHARS}`);
  if (length < SUMMARY_MIN_CHARS)
    failures.push(`${FAILURE.tooShort}: ${length} characters, at least ${SUMMARY_MIN_CHARS}`);
  const lengthOk = failures.length === 0;

  const promise = refundPromise(markdown);
  if (promise) failures.push(`${FAILURE.refundPromise}: ${promise}`);
  // A refund promise is reported once, even when the job's constraints forbid it too.
  const breaches = constraintBreaches(constraints, { text: markdown, toolsUsed: [] }).filter(
    (b) => !(promise && b.policy === 'no_refund_promises'),
  );
  for (const b of breaches) failures.push(`${FAILURE.constraintBreach}: ${b.policy}: ${b.breach}`);
  const policyOk = !promise && breaches.length === 0;

  // Under redaction the note quotes the question masked, as the specialist wrote it.
  const restated = markdown.includes(redactPersonalDataFor(constraints, question));
  if (!restated) failures.push(`${FAILURE.offTopic}: the note does not restate the customer question`);

  return {
    verdict: failures.length === 0 ? 'pass' : 'fail',
    scores: { length: lengthOk ? 1 : 0, policy: policyOk ? 1 : 0, answers_question: restated ? 1 : 0 },
    failures,
  };
}

export async function runReview(store: Store, pkg: HandoffV1): Promise<StageOutput> {
  const noteRef = requireArtifact(pkg, reviewStage.name, 'summary_md');
  const note = await readArtifactBody(store, noteRef, SummaryMd);
  const classification = await readArtifactBody(
    store,
    requireArtifact(pkg, reviewStage.name, CLASSIFICATION),
    Classification,
  );
  const review = reviewNote(note.markdown, classification.question, pkg.constraints);
  // The reviewed note's hash ties the verdict to it: crm-note writes only the note that passed.
  const body: VerdictV1 = { ...review, summary_hash: noteRef.hash };
  return {
    artifact: await writeArtifact(store, 'verdict.v1', VerdictV1, body),
    body,
    cost_usd: reviewStage.nominalCostUsd,
    evaluator: { last_verdict: review.verdict, failures: review.failures },
    summary: verdictSummary(review.verdict, review.failures),
  };
}
