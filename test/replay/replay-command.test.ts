/**
 * `handrail replay` on history files, no server: the programmatic API on the current code, on a
 * non-deterministic change (a timer after the job's work) and on the same change behind
 * `patched()`; every exported spelling of a history; and the CLI itself as a process.
 */
import fs from 'node:fs';
import { PassThrough } from 'node:stream';
import os from 'node:os';
import path from 'node:path';
import { temporal } from '@temporalio/proto';
import type { WorkflowBundle } from '@temporalio/worker';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { codeRoot } from '../../src/config';
import { runHandrail } from '../helpers/cli';
import { historyFile, listHistoryFiles } from '../../scripts/replay/histories';
import { runCli } from '../../src/operator/cli/run';
import { bundleWorkflows, quietReplayRuntime, replayHistoryFiles, type ReplayOutcome } from '../../src/replay';

quietReplayRuntime();

const variant = (name: string) => path.join(__dirname, 'variants', `${name}.ts`);
const job = historyFile('happy-path');
const hop = historyFile('duplicate-delivery');
/** The id of a history file's last event: where a timer added after the work meets the completion. */
const lastEventId = (file: string) =>
  Number((JSON.parse(fs.readFileSync(file, 'utf8')) as { events: { eventId: string }[] }).events.at(-1)!.eventId);

let current: WorkflowBundle;
let timerLast: WorkflowBundle;
let patchedTimerLast: WorkflowBundle;
let forms: Record<'cli' | 'webUi' | 'numeric', string>;

beforeAll(async () => {
  current = { code: fs.readFileSync(inject('workflowBundlePath'), 'utf8') };
  [timerLast, patchedTimerLast] = await Promise.all([
    bundleWorkflows(variant('timer-last')),
    bundleWorkflows(variant('patched-timer-last')),
  ]);
  // The same history as each exporter writes it: `temporal workflow show --output json` (the
  // recorder's spelling), the Web UI's short enum names, and proto-JSON enum numbers.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'handrail-replay-'));
  const recorded = JSON.parse(fs.readFileSync(job, 'utf8')) as { events: { eventType: string; eventId: string }[] };
  const pascal = (constant: string) =>
    constant
      .replace(/^EVENT_TYPE_/, '')
      .toLowerCase()
      .replace(/(?:^|_)([a-z])/g, (_m, c: string) => c.toUpperCase());
  const eventTypes = temporal.api.enums.v1.EventType as unknown as Record<string, number>;
  const write = (name: string, events: unknown[]) => {
    fs.writeFileSync(path.join(dir, name), JSON.stringify({ events }));
    return path.join(dir, name);
  };
  forms = {
    cli: job,
    webUi: write(
      'web-ui-download.json',
      recorded.events.map((e) => ({ ...e, eventType: pascal(e.eventType) })),
    ),
    numeric: write(
      'numeric-enums.json',
      recorded.events.map((e) => ({ ...e, eventId: Number(e.eventId), eventType: eventTypes[e.eventType] })),
    ),
  };
});

const failures = (outcomes: ReplayOutcome[]) => outcomes.filter((o) => !o.ok);

describe('replayHistoryFiles (the programmatic API)', () => {
  it('a recorded job and a recorded hop replay on the current code', async () => {
    const outcomes = await replayHistoryFiles([job, hop], { workflowBundle: current });
    expect(outcomes).toEqual([
      { history: job, workflowId: 'rec-happy-path', ok: true },
      { history: hop, workflowId: 'rec-duplicate-delivery-writeback-again', ok: true },
    ]);
  });

  it('a timer added after the work, without a patch: each history fails, named, with the command and the event id it met', async () => {
    const outcomes = await replayHistoryFiles([job, hop], { workflowBundle: timerLast });
    expect(outcomes).toEqual([
      expect.objectContaining({
        history: job,
        workflowId: 'rec-happy-path',
        ok: false,
        error: 'DeterminismViolationError',
        command: 'StartTimer',
        eventId: lastEventId(job),
        event: 'WorkflowExecutionCompleted',
        hint: expect.stringContaining('patched('),
      }),
      expect.objectContaining({
        history: hop,
        ok: false,
        command: 'StartTimer',
        eventId: lastEventId(hop),
        event: 'WorkflowExecutionCompleted',
      }),
    ]);
  });

  it('the same timer behind patched() replays', async () => {
    expect(failures(await replayHistoryFiles([job, hop], { workflowBundle: patchedTimerLast }))).toEqual([]);
  });

  it('a history exported by the temporal CLI, by the Web UI or with numeric enums replays, and fails the change, the same way', async () => {
    const files = Object.values(forms);
    expect(failures(await replayHistoryFiles(files, { workflowBundle: current }))).toEqual([]);
    const broken = await replayHistoryFiles(files, { workflowBundle: timerLast });
    expect(broken.map((o) => [o.history, !o.ok && o.command, !o.ok && o.eventId])).toEqual(
      files.map((f) => [f, 'StartTimer', lastEventId(job)]),
    );
  });
});

describe('the replay entry point (handrail/replay)', () => {
  // What a user's own suite writes: their history files, their workflow module, one assertion.
  it('replays history files in a few lines', async () => {
    const { replayHistoryFiles: replay } = await import('../../src/replay');
    const outcomes = await replay([job, hop], { workflowsPath: variant('patched-timer-last') });
    expect(outcomes.filter((o) => !o.ok)).toEqual([]);
  });
});

/** The unreachable server proves files need none. */
const handrail = (args: string[]) => runHandrail(args, { TEMPORAL_ADDRESS: '127.0.0.1:1' });

describe('handrail replay on a terminal', () => {
  it('many histories: a live count below the lines, cleared before the summary', async () => {
    let out = '';
    const stdout = Object.assign(new PassThrough(), { isTTY: true });
    stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
    const files = listHistoryFiles();
    expect(files.length).toBeGreaterThanOrEqual(10);
    const code = await runCli(['replay', ...files], {
      stdout,
      stderr: process.stderr,
      stdin: process.stdin,
      env: { TEMPORAL_ADDRESS: '127.0.0.1:1' },
    });
    expect(code).toBe(0);
    expect(out).toContain(`… replayed 1 of ${files.length}\r\x1b[2Kpass  `);
    expect(out).toContain(
      `… replayed ${files.length} of ${files.length}\r\x1b[2Kreplayed ${files.length} histories: ${files.length} passed, 0 failed\n`,
    );
  });
});

describe('handrail replay <files> as a process', () => {
  it('exits 0 when every history passes; --json is a report', async () => {
    const run = await handrail(['replay', path.relative(codeRoot, job), forms.webUi, '--json']);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({
      replayed: 2,
      passed: 2,
      failed: 0,
      histories: [
        { history: 'test/histories/happy-path.json', workflowId: 'rec-happy-path', ok: true },
        { history: forms.webUi, workflowId: 'rec-happy-path', ok: true },
      ],
    });
  });

  it('exits 1 when a history fails, printing a line per history that names the file, the command and the event', async () => {
    const run = await handrail([
      'replay',
      'test/histories/happy-path.json',
      forms.numeric,
      '--workflows',
      'test/replay/variants/timer-last.ts',
    ]);
    expect(run.code).toBe(1);
    const event = lastEventId(job);
    expect(run.stdout).toContain(
      `FAIL  test/histories/happy-path.json (rec-happy-path): the code issues StartTimer at event ${event} (WorkflowExecutionCompleted)\n`,
    );
    expect(run.stdout).toContain(
      `FAIL  ${forms.numeric} (rec-happy-path): the code issues StartTimer at event ${event} (WorkflowExecutionCompleted)\n`,
    );
    expect(run.stdout).toMatch(/^ {6}hint: .*patched\('<change-id>'\)/m);
    expect(run.stdout.trimEnd().split('\n').at(-1)).toBe('replayed 2 histories: 0 passed, 2 failed');
  });

  it('a file that is no history is a usage error (exit 2), naming the file', async () => {
    const run = await handrail(['replay', 'test/histories/results/happy-path.json']);
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(
      'handrail: happy-path.json is not a readable history: Invalid history, expected an object with an array of events\n',
    );
  });
});
