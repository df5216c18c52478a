/**
 * The demo's closing note for an agent pipeline: its hops, the tool calls its stages made (from
 * the job's conversation), the model tokens it was billed and what it cost. Offline, the model
 * is research-brief's scripted server, started here when no `HANDRAIL_MODEL_BASE_URL` is set.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { HandoffV1 } from '../../contracts';
import { readLog } from '../../activities/transcript-log';
import type { Store } from '../worker/store';
import { startResearchModel, type ResearchModel } from './research-model';

/** The offline model for an agent pipeline run without a real provider; undefined otherwise. */
export async function offlineModelFor(pipeline: string): Promise<ResearchModel | undefined> {
  if (pipeline !== 'research-brief' || process.env.HANDRAIL_MODEL_BASE_URL) return undefined;
  const model = await startResearchModel();
  const settings: Record<string, string> = {
    HANDRAIL_MODEL_BASE_URL: model.baseUrl,
    HANDRAIL_MODEL: 'research-offline',
    HANDRAIL_MODEL_USD_PER_MTOK_IN: '1',
    HANDRAIL_MODEL_USD_PER_MTOK_OUT: '4',
  };
  const before = Object.fromEntries(Object.keys(settings).map((name) => [name, process.env[name]]));
  // Read when the worker's model is made: the workers must be created after this.
  Object.assign(process.env, settings);
  // Closed, the model takes its settings back, so a later run in this process starts its own.
  const close = model.close.bind(model);
  model.close = async () => {
    for (const [name, value] of Object.entries(before))
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    await close();
  };
  return model;
}

/** How many tool calls the job's stages made, as their turns in the conversation record them. */
export async function toolCallsOf(store: Store, pkg: HandoffV1): Promise<number> {
  const { turns } = await readLog(store, pkg, pkg.job_id);
  return turns
    .flatMap((t) => t.messages)
    .flatMap((m) => m.message.content)
    .filter((block) => block.type === 'tool_use').length;
}

export async function agentNote(
  store: Store,
  result: { hops: number; spent_usd: number; package: HandoffV1 },
  model: ResearchModel | undefined,
): Promise<string> {
  const tokens = model
    ? `${model.billed.prompt_tokens + model.billed.completion_tokens} model tokens (${model.billed.prompt_tokens} in, ${model.billed.completion_tokens} out, ${model.requests.length} model calls)`
    : 'model tokens: on the chat spans (gen_ai.usage.*) with a real provider';
  return `agent run: ${result.hops} hops · ${await toolCallsOf(store, result.package)} tool calls · ${tokens} · cost $${result.spent_usd}\n${tokensRatioNote()}`;
}

/** The tokens ratio of the last `npm run bench:tokens` (or `npm run bench`) run, if there was one. */
export function tokensRatioNote(resultsDir = path.join(process.cwd(), 'results')): string {
  const runs = fs.existsSync(resultsDir)
    ? fs.readdirSync(resultsDir).filter((f) => /^bench(-tokens)?-.*\.json$/.test(f))
    : [];
  const ratios = runs
    .map(
      (f) =>
        JSON.parse(fs.readFileSync(path.join(resultsDir, f), 'utf8')) as {
          taken_at?: string;
          tokens?: { ratio?: number };
          tokens_per_job?: { ratio?: number };
        },
    )
    .map((r) => ({ at: r.taken_at ?? '', ratio: r.tokens?.ratio ?? r.tokens_per_job?.ratio }))
    .filter((r) => r.ratio !== undefined)
    .sort((a, b) => a.at.localeCompare(b.at));
  const last = ratios.at(-1);
  return last
    ? `tokens per job, whole conversation at every hop / per-edge handover: ${last.ratio!.toFixed(2)}× (npm run bench:tokens, ${last.at})`
    : 'tokens per job, whole conversation / per-edge handover: run `npm run bench:tokens` to measure the ratio';
}
