/**
 * What `handrail eval` scores and what it writes: one job as its history tells it (`EvalJob`),
 * scorers over it, and a run's results with the build that produced them (`EvalRun`).
 */
import type { AckRecord, HandoffV1, JobRequest, JobResult } from '../../contracts';
import type { Difference } from '../replay';

/** What a dataset entry declares it expects of its job (each part optional). */
export interface Expectation {
  /** How the job should end. */
  status?: JobResult['status'];
  /** Stages the job should pass through (in any order). */
  visits?: string[];
  /** The content the writer wrote: every `contains` text in it, no `absent` text, and `matches` (a regular expression). */
  write?: { contains?: string[]; absent?: string[]; matches?: string };
}

/** One artifact a stage made, in the order the job made them, with its body as the stage returned it. */
export interface EvalArtifact {
  stage: string;
  type: string;
  uri: string;
  body?: unknown;
  cost_usd: number;
  /** Tokens the stage reported (its handover's), when it reported any. */
  tokens?: number;
}

/** One job, as its history tells it: the input of every scorer. */
export interface EvalJob {
  /** The job's key across builds (a dataset entry and its repeat, or the recorded job id): compare matches on it. */
  case: string;
  job_id: string;
  source: 'recorded' | 'fresh';
  pipeline: string;
  request: JobRequest;
  /** How the job ended; `running` when its history has no end yet. */
  status: JobResult['status'] | 'running';
  /** The job's result when it ended through the rail. */
  result?: JobResult;
  acks: AckRecord[];
  /** The job's last package: the result's, else the last one a stage returned. */
  package?: HandoffV1;
  artifacts: EvalArtifact[];
  /** The stages in the order they ran (a stage run twice appears twice). */
  path: string[];
  /** Verdicts of the pipeline's critics, in order. */
  verdicts: ('pass' | 'fail')[];
  /** The body the writer acted on (the newest artifact before its hop that is not a verdict), when a writer ran. */
  written?: unknown;
  /** From the first event to the last (the job's close, or the last event so far). */
  latency_ms: number;
  expect?: Expectation;
  /** Set by `--replay`: the first hop where the current code differs from the recording, if any. */
  replay?: { moved?: { hop: number; stage: string; differences: Difference[] }; notes: string[] };
}

/** A scorer: a number for a job, or undefined when it does not apply (no critic ran, nothing expected). */
export interface Scorer {
  name: string;
  description: string;
  /** `rate`: 0..1 per job, its mean a rate (gates may speak in points); otherwise the value's unit. */
  unit: 'rate' | 'usd' | 'count' | 'ms' | 'tokens' | 'score';
  score(job: EvalJob): number | undefined | Promise<number | undefined>;
}

/** What built the code an eval ran: the commit, and a digest of each pipeline's definition. */
export interface BuildInfo {
  commit?: string;
  /** Uncommitted changes in the work tree when the eval ran. */
  dirty?: boolean;
  /** Pipeline name → a digest of its stages, routes, revisits and edges (a changed routing rule changes it). */
  pipelines: Record<string, string>;
  /** The module the pipelines came from, when not the built-in ones. */
  module?: string;
  handrail: string;
}

/** One scorer over a run: how many jobs it applied to, and where its values lie. */
export interface ScoreStats {
  n: number;
  mean: number;
  p50: number;
  p95: number;
  min: number;
  max: number;
}

export interface ScoredJob {
  case: string;
  job_id: string;
  source: EvalJob['source'];
  pipeline: string;
  status: EvalJob['status'];
  /** Why the job ended (the rail's reason), when it says. */
  reason?: string;
  path: string[];
  scores: Record<string, number>;
  replay?: EvalJob['replay'];
}

/** What `handrail eval` writes (`--out`), and what `handrail eval compare` reads. */
export interface EvalRun {
  format: 'handrail.eval.v1';
  build: BuildInfo;
  started_at: string;
  duration_ms: number;
  dataset: { histories: number; fresh: number; sources: string[] };
  scorers: { name: string; description: string; unit: Scorer['unit'] }[];
  summary: Record<string, ScoreStats>;
  jobs: ScoredJob[];
}
