import { fork } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort, portOpen } from '../../src/devtools/devserver/server';

const FIXTURE = path.join(__dirname, 'fixtures', 'start-dev-server.ts');

async function closedWithin(port: number, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (!(await portOpen('127.0.0.1', port))) return true;
    await new Promise((r) => setTimeout(r, 250));
  }
  return false;
}

// A killed `npm test` (or bench) must not leave its Temporal server running.
describe('a dev server this process starts', () => {
  let serverPid: number | undefined;
  let tmp: string | undefined;
  afterEach(() => {
    // Should the server outlive the test, it is not left behind either.
    if (serverPid) {
      try {
        process.kill(serverPid, 'SIGKILL');
      } catch {
        // gone already
      }
    }
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('stops when the process that started it is killed with SIGKILL', async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'handrail-tether-'));
    const [port, uiPort] = [await freePort(), await freePort()];
    const starter = fork(FIXTURE, [String(port), String(uiPort), path.join(tmp, 'server.log')], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    const started = await new Promise<{ pid?: number }>((resolve, reject) => {
      starter.once('message', (m) => resolve(m as { pid?: number }));
      starter.once('exit', (code) => reject(new Error(`the starter exited with ${code} before its server was up`)));
    });
    serverPid = started.pid;
    expect(await portOpen('127.0.0.1', port)).toBe(true);

    starter.kill('SIGKILL');
    expect(await closedWithin(port, 20_000), `the server on ${port} outlived the process that started it`).toBe(true);
  }, 120_000);
});
