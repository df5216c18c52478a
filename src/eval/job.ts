/**
 * A job's history decoded for scoring: pure, over the history alone (fresh runs are fetched
 * after they end and decoded the same way, so a recorded job and a fresh one score alike).
 */
import type { History } from '@temporalio/common/lib/proto-utils';
import { findPipeline, type Pipeline, type StageResult } from '../../contracts';
import { recordedJob, recordedResult, type RecordedStep } from '../replay';
import type { EvalArtifact, EvalJob, Expectation } from './types';

const VERDICT = 'verdict.v1';
const RECEIPT = 'receipt.v1';

/** Tokens a stage reported with its result (its handover's), if any. */
const tokensOf = (result: StageResult): number | undefined => result.handover?.tokens;

function artifactOf(step: RecordedStep & { result: StageResult }): EvalArtifact {
  const stage = step.kind === 'merge' ? 'merge' : step.work.stage;
  const tokens = tokensOf(step.result);
  return {
    stage,
    type: step.result.artifact.type,
    uri: step.result.artifact.uri,
    ...(step.result.body === undefined ? {} : { body: step.result.body }),
    cost_usd: step.result.cost_usd,
    ...(tokens === undefined ? {} : { tokens }),
  };
}

/** Which stages of the pipeline play a role; with no pipeline known, by the artifact they make. */
function roleOf(pipeline: Pipeline | undefined, stage: string, type: string): 'critic' | 'writer' | undefined {
  const card = pipeline?.get(stage);
  if (card) return card.role === 'critic' || card.role === 'writer' ? card.role : undefined;
  return type === VERDICT ? 'critic' : type === RECEIPT ? 'writer' : undefined;
}

/** The body the writer acted on: the newest artifact before it that is not a verdict or a receipt. */
function writtenBody(artifacts: readonly EvalArtifact[], writerAt: number): unknown {
  for (let n = writerAt - 1; n >= 0; n--) {
    const a = artifacts[n]!;
    if (a.type !== VERDICT && a.type !== RECEIPT && a.body !== undefined) return a.body;
  }
  return undefined;
}

type EventTime = { seconds?: number | { toNumber(): number } | null; nanos?: number | null } | null | undefined;

/** An event's time in ms: histories read from JSON carry plain numbers, fetched ones Longs. */
export function eventMs(time: EventTime): number {
  const seconds = time?.seconds;
  const whole = typeof seconds === 'number' ? seconds : (seconds?.toNumber() ?? 0);
  return whole * 1000 + Math.floor((time?.nanos ?? 0) / 1e6);
}

export interface JobCase {
  case: string;
  source: EvalJob['source'];
  expect?: Expectation;
}

/**
 * The job a `handoffJob` history tells; undefined for another workflow's history (a `stageHop`).
 * `pipelines` name the critics and writers (a pipeline not among them: by their artifacts).
 * `recorded`: the history already read as a job, when the caller has it.
 */
export function evalJobFromHistory(
  workflowId: string,
  history: History,
  pipelines: readonly Pipeline[],
  jobCase: JobCase,
  recorded = recordedJob(workflowId, history),
): EvalJob | undefined {
  if (!recorded) return undefined;
  const result = recordedResult(history);
  const pipeline = findPipeline(pipelines, recorded.request.pipeline);
  const done = recorded.steps.filter((s): s is RecordedStep & { result: StageResult } => s.result !== undefined);
  const artifacts = done.map(artifactOf);
  const verdicts: EvalJob['verdicts'] = [];
  let written: unknown;
  artifacts.forEach((a, n) => {
    const role = roleOf(pipeline, a.stage, a.type);
    const verdict = done[n]!.result.package.evaluator.last_verdict;
    if (role === 'critic' && verdict !== 'none') verdicts.push(verdict);
    if (role === 'writer' && written === undefined) written = writtenBody(artifacts, n);
  });
  const events = history.events ?? [];
  const pkg = result?.package ?? done.at(-1)?.result.package;
  return {
    case: jobCase.case,
    job_id: workflowId,
    source: jobCase.source,
    pipeline: pipeline?.name ?? recorded.request.pipeline ?? pipelines[0]?.name ?? 'unknown',
    request: recorded.request,
    status: result?.status ?? 'running',
    ...(result ? { result } : {}),
    acks: result?.acks ?? recorded.result?.acks ?? [],
    ...(pkg ? { package: pkg } : {}),
    artifacts,
    path: recorded.steps.flatMap((s) => (s.kind === 'stage' ? [s.work.stage] : [])),
    verdicts,
    ...(written === undefined ? {} : { written }),
    latency_ms: events.length > 1 ? eventMs(events.at(-1)!.eventTime) - eventMs(events[0]!.eventTime) : 0,
    ...(jobCase.expect ? { expect: jobCase.expect } : {}),
  };
}
