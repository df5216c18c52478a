/**
 * judge: `summary_md` → `verdict.v1`, and the package's evaluator state. The critic holds no
 * tools at all; with a model configured, the model grades only "answers the question".
 */
import { assistantMessage, failureCode, SummaryMd, VerdictV1, type HandoffV1, clip } from '../../contracts';
import { type IntakeV1 } from '../../contracts/pipelines/ticket-artifacts';
import { judgeStage } from '../../contracts/pipelines/ticket-triage';
import {
  type ChatMessage,
  type ChatModel,
  type Store,
  readArtifactBody,
  requireArtifact,
  writeArtifact,
  type StageOutput,
  type StageTurn,
  stageFailure,
  askModel,
} from '../../src';
import { readIntake, readRetrieval } from './retrieval';
import { judgeSummary, type AnswerGrade } from './rubric';

const MAX_FAILURE_CHARS = 400;

export async function runJudge(
  store: Store,
  model: ChatModel | undefined,
  pkg: HandoffV1,
  turn: StageTurn,
): Promise<StageOutput> {
  const summaryRef = requireArtifact(pkg, judgeStage.name, 'summary_md');
  const summary = await readArtifactBody(store, summaryRef, SummaryMd);
  const intake = await readIntake(store, pkg, judgeStage.name);
  const retrieval = await readRetrieval(store, pkg, judgeStage.name);

  let answerGrade: AnswerGrade | undefined;
  let cost = judgeStage.nominalCostUsd;
  const { messages } = await turn.prompt(gradePrompt(intake, summary.markdown));
  if (model) {
    const graded = await gradeAnswer(model, messages);
    answerGrade = graded.grade;
    cost = graded.cost_usd;
  }
  const rubric = judgeSummary({ summary, intake, retrieval, constraints: pkg.constraints, answerGrade });
  const failures = rubric.failures.map((f) => clip(f, MAX_FAILURE_CHARS));
  // The judged draft's hash makes each verdict its own artifact: two identical failures on two
  // different drafts are two verdicts, not one reused.
  const body: VerdictV1 = { ...rubric, failures, summary_hash: summaryRef.hash };
  turn.reply(assistantMessage(`verdict ${rubric.verdict}${failures.length > 0 ? `: ${failures.join('; ')}` : ''}`));
  return {
    artifact: await writeArtifact(store, 'verdict.v1', VerdictV1, body),
    body,
    cost_usd: cost,
    evaluator: { last_verdict: rubric.verdict, failures },
    summary: verdictSummary(rubric.verdict, failures),
  };
}

/** A verdict as a summary segment says it: pass, or fail with the failures' codes. */
export function verdictSummary(verdict: VerdictV1['verdict'], failures: readonly string[]): string {
  return verdict === 'pass'
    ? 'verdict pass'
    : `verdict fail: ${[...new Set(failures.map(failureCode))].join(', ') || 'no failure named'}`;
}

function gradePrompt(intake: IntakeV1, markdown: string): { system: string; question: string } {
  return {
    system:
      'You grade internal support summaries. Reply with JSON only: {"answers_question": <number 0..1>, "note": "<one sentence>"}. ' +
      '1 means the summary fully addresses the customer question; 0 means it does not address it at all.',
    question: `Customer question: ${intake.question}\n\nSummary:\n${markdown}`,
  };
}

async function gradeAnswer(
  model: ChatModel,
  messages: ChatMessage[],
): Promise<{ grade: AnswerGrade; cost_usd: number }> {
  const reply = await askModel(model, messages, { maxTokens: 200, json: true });
  let parsed: { answers_question?: unknown; note?: unknown };
  try {
    parsed = JSON.parse(reply.text) as typeof parsed;
  } catch {
    throw stageFailure('ModelRejected', `judge model reply is not JSON: ${reply.text.slice(0, 120)}`);
  }
  const score = parsed.answers_question;
  if (typeof score !== 'number' || !(score >= 0 && score <= 1)) {
    throw stageFailure(
      'ModelRejected',
      `judge model gave answers_question=${JSON.stringify(score)}, not a number in 0..1`,
    );
  }
  return {
    grade: { score, note: typeof parsed.note === 'string' ? parsed.note : undefined },
    cost_usd: reply.cost_usd,
  };
}
