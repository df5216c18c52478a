/**
 * `handrail eval` and `handrail eval compare` on the command line: read the dataset and the
 * build, run, write the results; or read two results, print the table, write the HTML report and
 * exit 1 when a gate fails.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { onTaskQueue } from '../client';
import type { HandrailConfig } from '../../config';
import { UsageError, type EvalCommand } from './args';
import { historyFileSource, querySources, type ReplaySource } from '../../replay';
import { BUILT_IN_DIFF, BUILT_IN_WORKFLOWS } from '../../pipelines';
import { offlineModelFor } from '../../devtools/agent-note';
import { loadEvalBuild, loadScorers, type EvalBuild } from '../../eval/build';
import { compareRuns } from '../../eval/compare';
import { parseDataset } from '../../eval/dataset';
import { comparisonText, runText } from '../../eval/format';
import { checkGate } from '../../eval/gate';
import { htmlReport } from '../../eval/report-html';
import { runEval } from '../../eval/run';
import { BUILT_IN_SCORERS } from '../../eval/scorers';
import type { EvalRun } from '../../eval/types';

/** The eval's default build: the built-in pipelines, their stages and workflow module. */
export const BUILT_IN_BUILD: EvalBuild = { ...BUILT_IN_DIFF, ...BUILT_IN_WORKFLOWS };

/**
 * A research pipeline without a real provider runs on its offline model, as the demo does: on
 * workers of its own, since every stage that can call a model would call it (the ticket judges).
 */
async function offlineModels(pipelines: readonly string[]) {
  const model = pipelines.includes('research-brief') ? await offlineModelFor('research-brief') : undefined;
  return { own: model ? ['research-brief'] : [], close: async () => model?.close() };
}

interface EvalIo {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
}

const line = (stream: NodeJS.WritableStream, text: string) => stream.write(`${text}\n`);

function readFile(file: string, what: string): string {
  if (!fs.existsSync(file)) throw new UsageError(`${what} ${file}: no such file`);
  return fs.readFileSync(file, 'utf8');
}

function module(file: string, flag: string): string {
  if (!fs.existsSync(path.resolve(file))) throw new UsageError(`${flag} ${file}: no such file`);
  return file;
}

/** An eval's results file, checked enough that compare can trust its shape. */
export function readRun(file: string): EvalRun {
  let run: EvalRun;
  try {
    run = JSON.parse(readFile(file, 'eval results')) as EvalRun;
  } catch (err) {
    if (err instanceof UsageError) throw err;
    throw new UsageError(`${file} is not JSON: ${(err as Error).message}`);
  }
  if (run?.format !== 'handrail.eval.v1' || !Array.isArray(run.jobs) || typeof run.summary !== 'object')
    throw new UsageError(`${file} is not a handrail eval results file (format handrail.eval.v1)`);
  return run;
}

async function evalRun(
  command: Extract<EvalCommand, { action: 'run' }>,
  connect: () => Promise<Client>,
  config: HandrailConfig,
  io: EvalIo,
): Promise<number> {
  const build = command.pipelines ? await loadEvalBuild(module(command.pipelines, '--pipelines')) : BUILT_IN_BUILD;
  const user = (await Promise.all(command.scorers.map((s) => loadScorers(module(s, '--scorers'))))).flat();
  const clash = user.find((s) => BUILT_IN_SCORERS.some((b) => b.name === s.name));
  if (clash) throw new UsageError(`--scorers: ${clash.name} is a built-in scorer's name; name yours otherwise`);
  // Every input is read before any job starts: a bad line fails in a second, not after a server start.
  const fresh = command.datasets.flatMap((d) => parseDataset(readFile(d, '--jobs'), d, build.pipelines));
  const files = command.files.map(historyFileSource);
  const query = command.query && onTaskQueue(command.query, config.taskQueue);
  const client = query ? await connect() : undefined;
  async function* histories(): AsyncGenerator<ReplaySource> {
    yield* files;
    if (client && query) yield* querySources(client, query);
  }
  const run = await runEval({
    build,
    histories: histories(),
    fresh,
    scorers: [...BUILT_IN_SCORERS, ...user],
    replay: command.replay,
    ...(command.address ? { server: { address: command.address, namespace: config.namespace } } : {}),
    ...(command.concurrency ? { concurrency: command.concurrency } : {}),
    prepare: offlineModels,
    sources: [...command.files, ...(query ? [`query: ${query}`] : []), ...command.datasets],
    log: command.json ? undefined : (m) => line(io.stderr, m),
  });
  if (command.out) fs.writeFileSync(command.out, `${JSON.stringify(run, null, 2)}\n`);
  if (command.json) line(io.stdout, JSON.stringify(run, null, 2));
  else line(io.stdout, `${runText(run)}${command.out ? `\nresults: ${command.out}` : ''}`);
  return 0;
}

function evalCompare(command: Extract<EvalCommand, { action: 'compare' }>, io: EvalIo): number {
  const comparison = compareRuns(readRun(command.a), readRun(command.b));
  const gates = command.gates.map((g) => checkGate(g, comparison));
  if (command.html)
    fs.writeFileSync(command.html, htmlReport(comparison, gates, `handrail eval: ${command.a} → ${command.b}`));
  if (command.json) {
    const { pairs: _pairs, ...shown } = comparison;
    line(io.stdout, JSON.stringify({ ...shown, gates }, null, 2));
  } else line(io.stdout, `${comparisonText(comparison, gates)}${command.html ? `\nreport: ${command.html}` : ''}`);
  return gates.every((g) => g.ok) ? 0 : 1;
}

/** Exit code: 0, or 1 when a gate failed (usage errors throw UsageError). */
export async function evalCommand(
  command: EvalCommand,
  connect: () => Promise<Client>,
  config: HandrailConfig,
  io: EvalIo,
): Promise<number> {
  return command.action === 'compare' ? evalCompare(command, io) : evalRun(command, connect, config, io);
}
