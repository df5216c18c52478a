/**
 * scripts/rollout-gate.sh before a build takes traffic: handrail rolls out by a rolling replace
 * (docs/cluster.md), which moves every open job onto the new build, so the gate replays the
 * fleet's open jobs whatever window RECENT names — and stops at a replay that fails.
 * `HANDRAIL` is a stand-in that logs each command it is given (the commands themselves have their
 * own tests: replay-command, eval).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect, it } from 'vitest';

const script = path.join(__dirname, '..', '..', '..', 'scripts', 'rollout-gate.sh');

/** Runs the gate with a stand-in `handrail` that fails the command whose words include `failOn`. */
function gate(env: Record<string, string>, failOn: string) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rollout-gate-'));
  const log = path.join(dir, 'calls.log');
  const standIn = path.join(dir, 'handrail.sh');
  fs.writeFileSync(
    standIn,
    `#!/usr/bin/env bash\nprintf '%s\\n' "$*" >> ${JSON.stringify(log)}\n[[ "$*" == *${JSON.stringify(failOn)}* ]] && exit 3\nexit 0\n`,
    { mode: 0o755 },
  );
  const run = spawnSync('bash', [script], {
    env: { PATH: process.env.PATH!, HANDRAIL: standIn, OUT: path.join(dir, 'out'), ...env },
    encoding: 'utf8',
  });
  const calls = fs.existsSync(log) ? fs.readFileSync(log, 'utf8').trim().split('\n') : [];
  fs.rmSync(dir, { recursive: true, force: true });
  return { status: run.status, calls };
}

it('replays the open jobs first, then the recent window, before scoring anything', () => {
  const { calls } = gate({ RECENT: 'CloseTime > "2026-12-01T00:00:00Z"' }, 'eval');
  expect(calls.slice(0, 3)).toEqual([
    'replay --query ExecutionStatus="Running"',
    'replay --query CloseTime > "2026-12-01T00:00:00Z"',
    expect.stringMatching(/^eval --query CloseTime/),
  ]);
});

it('an open job that does not replay stops the gate before the recent window and the eval', () => {
  const { status, calls } = gate({}, 'Running');
  expect(status).toBe(3);
  expect(calls).toEqual(['replay --query ExecutionStatus="Running"']);
});
