import { fork, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { freePort, portOpen } from '../../src/devtools/devserver/server';

const FIXTURE = path.join(__dirname, 'fixtures', 'start-dev-server.ts');

/** Pids of the Temporal dev servers on this port, read from /proc (whoever their parent is; the
 * tether, a node process, is not one). */
function serversOn(port: number): number[] {
  return fs
    .readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .flatMap((pid) => {
      try {
        const argv = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
        return path.basename(argv[0] ?? '') === 'temporal' &&
          argv.includes('start-dev') &&
          argv[argv.indexOf('--port') + 1] === String(port)
          ? [Number(pid)]
          : [];
      } catch {
        return [];
      }
    });
}

// A killed `npm test` (or bench) must not leave its Temporal server running.
describe('a dev server this process starts', () => {
  let starter: ChildProcess | undefined;
  let port: number | undefined;
  let tmp: string | undefined;
  afterEach(() => {
    // Should the test fail, neither the starter nor its server is left behind.
    starter?.kill('SIGKILL');
    for (const pid of port ? serversOn(port) : []) process.kill(pid, 'SIGKILL');
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('stops when the process that started it is killed with SIGKILL', async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'handrail-tether-'));
    port = await freePort();
    const uiPort = await freePort();
    const child = fork(FIXTURE, [String(port), String(uiPort), path.join(tmp, 'server.log')], {
      execArgv: ['--import', 'tsx'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    starter = child;
    await new Promise<void>((resolve, reject) => {
      child.once('message', () => resolve());
      child.once('exit', (code) => reject(new Error(`the starter exited with ${code} before its server was up`)));
    });
    expect(serversOn(port)).toHaveLength(1);
    expect(await portOpen('127.0.0.1', port)).toBe(true);

    child.kill('SIGKILL');
    const on = port;
    await vi.waitFor(
      async () => {
        expect(serversOn(on), `the server on ${on} outlived the process that started it`).toEqual([]);
        expect(await portOpen('127.0.0.1', on)).toBe(false);
      },
      { timeout: 20_000, interval: 250 },
    );
  }, 120_000);
});
