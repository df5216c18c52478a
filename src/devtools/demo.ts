/**
 * `npm run demo`: the main job. Provisions the temporal CLI, starts (or reuses) the local dev
 * server and the records API, runs a worker, starts one job from a sample ticket, prints
 * its result, the Web UI link and the API's URL. The dev server and the API keep running
 * afterwards, so the job stays visible; `npm run server:stop` stops both.
 * `npm run demo -- --pipeline <name>` runs the job through another built-in pipeline;
 * `npm run demo -- --pipeline research-brief --approve` has its researcher ask a human before
 * each library search, and says how to decide each call (CLI and job page) while the job waits.
 */
import { handrailLogger } from '../worker/logger';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { BUILT_IN_PIPELINES } from '../../contracts/pipelines';
import { Runtime } from '@temporalio/worker';
import { jobUrl, loadConfig } from '../config';
import { connectHandrail, startJob, type JobHandle } from '../operator/client';
import { statusQuery } from '../../workflows/definitions';
import { connectWorker } from '../connect';
import { acksTable, terminalSafe } from '../operator/cli/format';
import { paintFor } from '../operator/cli/terminal';
import { agentNote, offlineModelFor } from './agent-note';
import { ensureApiServer } from './api-server';
import { ensureCodecServer } from './codec-server';
import { devServerSettings } from './devserver/settings';
import { ensureDevServer } from './devserver/server';
import { sampleJobRequest } from './samples/tickets';
import { openStore } from '../worker/store';
import { tracingFromEnv } from '../worker/tracing';
import { builtInPlugin } from '../pipelines';
import { createHandrailWorkers, handoverWorkspace, runWorkers } from '../worker/worker';

function demoOptions(): { pipeline: string; approve: boolean } {
  const { values } = parseArgs({
    options: { pipeline: { type: 'string', default: BUILT_IN_PIPELINES[0]!.name }, approve: { type: 'boolean' } },
  });
  const names = BUILT_IN_PIPELINES.map((p) => p.name);
  if (!names.includes(values.pipeline))
    throw new Error(`unknown pipeline "${values.pipeline}"; built in: ${names.join(', ')}`);
  if (values.approve && values.pipeline !== 'research-brief')
    throw new Error(
      "--approve asks before the research-brief researcher's searches: use it with --pipeline research-brief",
    );
  return { pipeline: values.pipeline, approve: Boolean(values.approve) };
}

/** While the job runs: each tool call it waits on, with the commands that decide it. */
async function announceCalls(handle: JobHandle, jobPage: string | undefined): Promise<void> {
  const told = new Set<string>();
  for (;;) {
    if ((await handle.describe()).status.name !== 'RUNNING') return;
    const call = (await handle.query(statusQuery).catch(() => undefined))?.escalation?.tool_call;
    if (call && !told.has(call.digest)) {
      told.add(call.digest);
      console.log(
        [
          `\nThe researcher asks before calling ${terminalSafe(`${call.name} ${JSON.stringify(call.args)}`)}. Decide it:`,
          `  npm run cli -- decide ${handle.workflowId} approve --tool-call ${call.digest} --actor <you>`,
          `  npm run cli -- decide ${handle.workflowId} approve --tool-call ${call.digest} --deny --note "why" --actor <you>`,
          ...(jobPage ? [`  or on the job page: ${jobPage}`] : []),
        ].join('\n'),
      );
    }
    await new Promise((r) => setTimeout(r, 500));
  }
}

async function main(): Promise<void> {
  const { pipeline, approve } = demoOptions();
  // The demo prints its own story; worker chatter stays at warnings.
  Runtime.install({ logger: handrailLogger() });
  const config = loadConfig();
  const settings = devServerSettings(config);
  const codec = await ensureCodecServer(config);
  const server = await ensureDevServer({
    ...settings,
    namespace: config.namespace,
    detached: true,
    codecEndpoint: codec?.url,
  });
  if (server.startedHere)
    console.log(
      `Started a Temporal dev server at ${server.address} (history in ${path.relative(process.cwd(), settings.dbFile)}).`,
    );

  // The API is a convenience here: a port taken by something else costs the link, not the demo.
  const api = await ensureApiServer(config).catch((err: Error) => {
    console.warn(`The handoff records API did not start: ${err.message}`);
    return undefined;
  });

  // An agent pipeline without a real provider runs on its offline model.
  const offlineModel = await offlineModelFor(pipeline);
  if (offlineModel)
    console.log(`No HANDRAIL_MODEL_BASE_URL: ${pipeline} runs on its offline model at ${offlineModel.baseUrl}.`);
  const connection = await connectWorker(config);
  const store = await openStore(config);
  const plugin = builtInPlugin(approve ? { researchApprovals: { search: 'always' } } : {});
  const client = await connectHandrail(config, plugin);
  const tracing = await tracingFromEnv();
  const workers = await createHandrailWorkers({
    connection,
    plugin,
    config,
    store,
    tracer: tracing.tracer,
    temporalPlugins: tracing.temporalPlugins,
    workspace: handoverWorkspace(config),
  });
  const running = runWorkers(workers);
  try {
    const jobId = `demo-${new Date()
      .toISOString()
      .replace(/[-:.TZ]/g, '')
      .slice(0, 14)}`;
    const { handle } = await startJob(
      client,
      { ...sampleJobRequest(jobId), pipeline },
      { taskQueue: config.taskQueue },
    );
    // The job page follows it live (hops, acks, wallet, model text) on the API server.
    const jobPage = api ? `${api.url}/jobs/${encodeURIComponent(jobId)}` : undefined;
    console.log(
      `Started job ${jobId} (pipeline ${pipeline}) — watch it: ${jobUrl(config, jobId)}${jobPage ? ` or live at ${jobPage}` : ''}`,
    );
    if (approve) await announceCalls(handle, jobPage);
    const result = await handle.result();
    console.log(`\nJob ${result.job_id}: ${result.status}${result.reason ? ` (${String(result.reason)})` : ''}`);
    console.log(
      `hops ${result.hops} · spent $${result.spent_usd} · wallet left $${result.package.budget.usd_remaining}`,
    );
    console.log(
      `\n${acksTable(
        result.acks.map((a) => ({ ...a, reason: a.reason.slice(0, 70) })),
        paintFor(process.stdout, process.env),
      )}`,
    );
    if (pipeline === 'research-brief') console.log(await agentNote(store, result, offlineModel));
    if (result.receipt)
      console.log(
        `receipt: ${result.receipt.write_key} → ${result.receipt.system} ${result.receipt.reference} (${result.receipt.status})`,
      );
    console.log(
      `\nWeb UI: ${jobUrl(config, jobId)}${codec ? ` (payloads encrypted; the UI decodes them through the codec server at ${codec.url})` : ''}`,
    );
    if (api) {
      console.log(`Job page: ${jobPage} (it asks for the token in ${path.relative(process.cwd(), api.tokenFile)})`);
      console.log(
        `Handoff records API: ${api.url} (OpenAPI at ${api.url}/openapi.json; user "demo", token in ${path.relative(process.cwd(), api.tokenFile)}): try \`npm run cli -- handoffs list\``,
      );
    }
    console.log(
      `The dev server${api ? ' and the API keep' : ' keeps'} running (${server.address}); stop ${api ? 'them' : 'it'} with \`npm run server:stop\`.`,
    );
  } finally {
    for (const w of workers) w.shutdown();
    await running;
    await tracing.shutdown();
    await client.connection.close();
    await connection.close();
    await store.close();
    await offlineModel?.close();
  }
}

main().catch((err: Error) => {
  console.error(err.message);
  process.exit(1);
});
