/**
 * `handrail replay` against the suite's dev server: a finished job by `--job`, the open jobs of
 * this deployment by `--query` (the pre-deploy fleet check), and the same job exported by the
 * temporal CLI and as the Web UI's download, all in one run; then a change that breaks them.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { resolveTemporalCli } from '../../src/devtools/devserver/temporal-cli';
import { getJob, jobResult, onTaskQueue, startJob } from '../../src/operator/client';
import type { JobDiff, ReplayOutcome } from '../../src/replay';
import { runHandrail } from '../helpers/cli';
import { jobRequest, startRail, until, type Rail } from '../helpers/rail';

const RUNNING = 'ExecutionStatus="Running"';

let rail: Rail;
let dir: string;
let done: string;
let waiting: string;
let exported: { cli: string; webUi: string };

const handrail = (args: string[]) =>
  runHandrail(args, { TEMPORAL_ADDRESS: inject('temporalAddress'), HANDRAIL_TASK_QUEUE: rail.taskQueue });

/** What the Web UI's Download button saves: `{ events }` from the UI server's history API. */
async function webUiDownload(workflowId: string, runId: string): Promise<string> {
  const url = `${inject('webUiUrl')}/api/v1/namespaces/${inject('namespace')}/workflows/${encodeURIComponent(workflowId)}/history?execution.runId=${runId}`;
  const response = await fetch(url);
  if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
  const body = (await response.json()) as { history: { events: unknown[] }; nextPageToken?: string };
  expect(body.nextPageToken ?? '').toBe('');
  return JSON.stringify({ events: body.history.events }, null, 2);
}

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'handrail-replay-it-'));
  rail = await startRail();
  const finished = jobRequest();
  // An empty wallet at draft: the job waits for a human, open, like the jobs a deploy must not break.
  const open = jobRequest({ budget: { usd: 0.005, revisions: 1 } });
  [done, waiting] = [finished.job_id, open.job_id];
  await startJob(rail.client, finished, { taskQueue: rail.taskQueue });
  await startJob(rail.client, open, { taskQueue: rail.taskQueue });
  expect((await jobResult(rail.client, done)).status).toBe('completed');
  await until(
    'the open job to escalate',
    async () => (await getJob(rail.client, waiting)).status.status === 'escalated',
  );
  // Visibility trails the workflow by a moment.
  await until(
    'visibility to list the open job',
    async () => (await rail.client.workflow.count(onTaskQueue(RUNNING, rail.taskQueue))).count === 1,
  );

  const temporal = (await resolveTemporalCli()).path;
  const cli = path.join(dir, `${done}.temporal-cli.json`);
  fs.writeFileSync(
    cli,
    execFileSync(
      temporal,
      [
        'workflow',
        'show',
        '--workflow-id',
        done,
        '--output',
        'json',
        '--address',
        inject('temporalAddress'),
        '--namespace',
        inject('namespace'),
      ],
      { encoding: 'utf8' },
    ),
  );
  const { runId } = await rail.client.workflow.getHandle(done).describe();
  const webUi = path.join(dir, `${done}.web-ui.json`);
  fs.writeFileSync(webUi, await webUiDownload(done, runId));
  exported = { cli, webUi };
});

afterAll(async () => {
  if (waiting)
    await rail?.client.workflow
      .getHandle(waiting)
      .terminate('test over')
      .catch(() => undefined);
  await rail?.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('handrail replay against the dev server', () => {
  it('the exports are the JSON forms users have: { events } with enum names as strings', () => {
    const first = (file: string) =>
      (JSON.parse(fs.readFileSync(file, 'utf8')) as { events: { eventId: unknown; eventType: unknown }[] }).events[0];
    expect(first(exported.cli)).toMatchObject({ eventId: '1', eventType: 'EVENT_TYPE_WORKFLOW_EXECUTION_STARTED' });
    expect(first(exported.webUi)).toMatchObject({ eventId: '1', eventType: 'EVENT_TYPE_WORKFLOW_EXECUTION_STARTED' });
  });

  it('files from the temporal CLI and the Web UI, --job and --query all pass on the current code; --json reports each', async () => {
    const run = await handrail(['replay', exported.cli, exported.webUi, '--job', done, '--query', RUNNING, '--json']);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout) as {
      replayed: number;
      passed: number;
      failed: number;
      histories: ReplayOutcome[];
    };
    expect(report).toMatchObject({ replayed: 4, passed: 4, failed: 0 });
    expect(report.histories.map((h) => [h.history, h.workflowId, h.ok])).toEqual([
      [exported.cli, done, true],
      [exported.webUi, done, true],
      [done, done, true],
      [waiting, waiting, true],
    ]);
  });

  it("--diff: real exports, --job and --query (an open job too) are as recorded on the current code; a changed drafter names the finished job's draft", async () => {
    const same = await handrail([
      'replay',
      '--diff',
      exported.cli,
      exported.webUi,
      '--job',
      done,
      '--query',
      RUNNING,
      '--json',
    ]);
    expect(same.stderr).toBe('');
    expect(same.code).toBe(0);
    const report = JSON.parse(same.stdout) as { diffed: number; same: number; differ: number; jobs: JobDiff[] };
    expect(report).toMatchObject({ diffed: 4, same: 4, differ: 0 });
    expect(report.jobs.map((j) => [j.history, j.workflowId, j.hops, j.first])).toEqual([
      [exported.cli, done, 5, undefined],
      [exported.webUi, done, 5, undefined],
      [done, done, 5, undefined],
      // Escalated before the draft: intake and retrieve ran.
      [waiting, waiting, 2, undefined],
    ]);
    const changed = await handrail([
      'replay',
      '--diff',
      '--job',
      done,
      '--query',
      RUNNING,
      '--pipelines',
      'test/replay/variants/diff-drafter-wording.ts',
    ]);
    expect(changed.code).toBe(1);
    expect(changed.stdout).toContain(`DIFF  ${done}: hop 2 (draft)\n`);
    expect(changed.stdout).toContain(`same  ${waiting}: 2 hops as recorded\n`);
    expect(changed.stdout.trimEnd().split('\n').at(-1)).toBe('diffed 2 histories: 1 as recorded, 1 differ');
  });

  it('--job and --query print a line per job and exit 0', async () => {
    const run = await handrail(['replay', '--job', done, '--query', RUNNING]);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(`pass  ${done}\npass  ${waiting}\nreplayed 2 histories: 2 passed, 0 failed\n`);
  });

  it('a change without a patch fails the finished and the open job by name, with the event; exit 1', async () => {
    const run = await handrail([
      'replay',
      '--job',
      done,
      '--query',
      RUNNING,
      '--workflows',
      'test/replay/variants/timer-first.ts',
    ]);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain(`FAIL  ${done}: the code issues StartTimer at event 5 (ActivityTaskScheduled)\n`);
    expect(run.stdout).toContain(`FAIL  ${waiting}: the code issues StartTimer at event 5 (ActivityTaskScheduled)\n`);
    expect(run.stdout).toContain(
      "hint: the code now issues StartTimer where the history has ActivityTaskScheduled; keep recorded jobs on the old path: if (patched('<change-id>'))",
    );
    expect(run.stdout.trimEnd().split('\n').at(-1)).toBe('replayed 2 histories: 0 passed, 2 failed');
  });

  it('a query the server refuses and a missing --workflows module are usage errors (exit 2)', async () => {
    const query = await handrail(['replay', '--query', 'ExecutionStatus = ']);
    expect(query.code).toBe(2);
    expect(query.stderr).toMatch(/^handrail: --query is not a visibility query the server accepts: /);
    const workflows = await handrail(['replay', '--job', done, '--workflows', 'no/such/workflows.ts']);
    expect(workflows.code).toBe(2);
    expect(workflows.stderr).toBe(
      'handrail: --workflows no/such/workflows.ts: no such file (give the workflow module your worker runs)\n',
    );
  });

  it('an unknown job is exit 3, naming it', async () => {
    const run = await handrail(['replay', '--job', 'no-such-job']);
    expect(run.code).toBe(3);
    expect(run.stderr).toContain('no job "no-such-job" in this namespace');
  });
});
