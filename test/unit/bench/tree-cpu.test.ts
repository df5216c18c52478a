import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { treeCpuMicros } from '../../../bench/lab';

const children: ChildProcess[] = [];
afterEach(() => {
  // Each is a process group of its own (detached), so its descendants go with it.
  for (const c of children.splice(0)) process.kill(-c.pid!, 'SIGKILL');
});

/** A shell whose child burns `busyMs` of CPU time, says so, then both stay alive for a while. */
function shellWithBusyChild(busyMs: number): { shell: ChildProcess; burnt: Promise<void> } {
  const burn = `while (process.cpuUsage().user < ${busyMs * 1000}); console.log("burnt"); setTimeout(() => undefined, 20000);`;
  const shell = spawn('sh', ['-c', `"${process.execPath}" -e '${burn}'; sleep 20`], {
    stdio: ['ignore', 'pipe', 'ignore'],
    detached: true,
  });
  children.push(shell);
  const burnt = new Promise<void>((resolve) =>
    shell.stdout!.on('data', (d: Buffer) => d.toString().includes('burnt') && resolve()),
  );
  return { shell, burnt };
}

describe.skipIf(!fs.existsSync('/proc/self/stat'))('treeCpuMicros (the bench reads the dev server this way)', () => {
  it("counts a descendant's CPU under the root it was started from", async () => {
    const { shell, burnt } = shellWithBusyChild(300);
    await burnt;
    expect(treeCpuMicros(shell.pid!)).toBeGreaterThanOrEqual(250_000);
  });

  it('counts a descendant that exited, once the tree reaped it (a PostgreSQL backend that ended)', async () => {
    const burn = `while (process.cpuUsage().user < 300000);`;
    const shell = spawn('sh', ['-c', `"${process.execPath}" -e '${burn}'; echo reaped; sleep 20`], {
      stdio: ['ignore', 'pipe', 'ignore'],
      detached: true,
    });
    children.push(shell);
    await new Promise<void>((resolve) =>
      shell.stdout!.on('data', (d: Buffer) => d.toString().includes('reaped') && resolve()),
    );
    expect(treeCpuMicros(shell.pid!)).toBeGreaterThanOrEqual(250_000);
  });

  it('counts nothing outside the tree: an idle process next to a busy one', async () => {
    const { burnt } = shellWithBusyChild(300);
    const idle = spawn('sleep', ['20'], { stdio: 'ignore', detached: true });
    children.push(idle);
    await burnt;
    expect(treeCpuMicros(idle.pid!)).toBeLessThan(50_000);
  });
});
