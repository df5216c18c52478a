/**
 * Model tokens per job for research-brief with per-edge handover against
 * the same pipeline handing the whole conversation to every stage, in the same run, on the
 * same offline model (it bills prompt tokens by what it is sent). A section of `npm run bench`;
 * `npm run bench:tokens` runs it alone.
 */
import path from 'node:path';
import { NativeConnection, type Worker } from '@temporalio/worker';
import { researchBrief } from '../../contracts/pipelines/research-brief';
import { researchBriefActivities } from '../../activities/research-brief';
import { startResearchModel, type ResearchModel } from '../../src/devtools/research-model';
import { sampleJobRequest } from '../../src/devtools/samples/tickets';
import { startJob } from '../../src/operator/client';
import { bundleRail } from '../../src/worker/bundle';
import { createChatModel } from '../../src/worker/model';
import { openStore } from '../../src/worker/store';
import { createHandrailWorkers, runWorkers } from '../../src/worker/worker';
import { HandrailPlugin } from '../../src/plugin';
import { NAMESPACE, runId, type Lab } from '../lab';
import { markdownTable } from '../report';
import { researchBriefWholeConversation } from './pipeline';

export interface TokensJob {
  pipeline: string;
  handover: string;
  status: string;
  model_calls: number;
  prompt_tokens: number;
  completion_tokens: number;
  tokens: number;
  spent_usd: number;
}

const VARIANTS = [
  { pipeline: researchBrief, handover: 'per edge (researcher → critic transcript only)' },
  { pipeline: researchBriefWholeConversation, handover: 'whole conversation at every hop' },
] as const;

async function runJob(
  lab: Pick<Lab, 'client'>,
  model: ResearchModel,
  taskQueue: string,
  variant: (typeof VARIANTS)[number],
) {
  const before = { ...model.billed, calls: model.requests.length };
  const jobId = `tokens-${variant.pipeline.name}-${runId()}`;
  const { handle } = await startJob(
    lab.client,
    { ...sampleJobRequest(jobId), pipeline: variant.pipeline.name },
    { taskQueue, pipelines: [researchBrief, researchBriefWholeConversation] },
  );
  const result = await handle.result();
  const prompt = model.billed.prompt_tokens - before.prompt_tokens;
  const completion = model.billed.completion_tokens - before.completion_tokens;
  return {
    pipeline: variant.pipeline.name,
    handover: variant.handover,
    status: result.status,
    model_calls: model.requests.length - before.calls,
    prompt_tokens: prompt,
    completion_tokens: completion,
    tokens: prompt + completion,
    spent_usd: result.spent_usd,
  } satisfies TokensJob;
}

export interface TokensFigures {
  jobs: TokensJob[];
  /** Tokens per job handing the whole conversation over, over the per-edge handover's. */
  ratio: number;
}

export async function tokensPerJob(lab: Pick<Lab, 'address' | 'tmp' | 'client'>): Promise<TokensFigures> {
  const model = await startResearchModel();
  const chatModel = createChatModel({
    baseUrl: model.baseUrl,
    model: 'research-offline',
    usdPerMTokIn: 1,
    usdPerMTokOut: 4,
    timeoutMs: 30_000,
  });
  const { code } = await bundleRail(path.join(__dirname, 'workflows.ts'));
  const connection = await NativeConnection.connect({ address: lab.address });
  const store = await openStore({ dataDir: lab.tmp, databaseUrl: undefined });
  const taskQueue = `bench-tokens-${runId()}`;
  let workers: Worker[] = [];
  let running: Promise<void> | undefined;
  try {
    workers = await createHandrailWorkers({
      connection,
      plugin: new HandrailPlugin({
        pipelines: [researchBrief, researchBriefWholeConversation],
        // The rail sends each delivery its edge's handover: one set of stage activities serves both.
        activities: (deps) => researchBriefActivities({ ...deps, model: chatModel }),
      }),
      config: { namespace: NAMESPACE, taskQueue },
      store,
      workflowBundle: { code },
    });
    running = runWorkers(workers);
    const jobs: TokensJob[] = [];
    for (const variant of VARIANTS) jobs.push(await runJob(lab, model, taskQueue, variant));
    return { jobs, ratio: jobs[1]!.tokens / jobs[0]!.tokens };
  } finally {
    for (const w of workers) w.shutdown();
    await running;
    await store.close();
    await connection.close();
    await model.close();
  }
}

export function tokensMarkdown(figures: TokensFigures): string {
  const rows = figures.jobs.map((j) => [
    j.pipeline,
    j.handover,
    j.status,
    j.model_calls,
    j.prompt_tokens,
    j.completion_tokens,
    j.tokens,
    `$${j.spent_usd}`,
  ]);
  return [
    '## Model tokens per job: research-brief, per-edge handover vs the whole conversation at every hop\n',
    markdownTable(['pipeline', 'handover', 'status', 'model calls', 'in', 'out', 'tokens/job', 'spent'], rows),
    `\nwhole conversation / per-edge handover: ${figures.ratio.toFixed(2)}× the tokens per job`,
  ].join('\n');
}
