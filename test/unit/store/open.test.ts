/**
 * Opening the SQLite store where it cannot work must fail at once, naming the path. Each case runs
 * in a child process, as the worker does: openStore() from the environment. Permissions only bind
 * a non-root user, so as root the child drops to `nobody` (setpriv).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { codeRoot } from '../../../src/config';
import { openStore } from '../../../src/worker/store';

const NOBODY = 65534;
const isRoot = process.getuid?.() === 0;
const setpriv = isRoot && spawnSync('setpriv', ['--version'], { stdio: 'ignore' }).status === 0;

const OPEN = `require(${JSON.stringify(path.join(codeRoot, 'src', 'worker', 'store'))}).openStore().then(
  (store) => store.close().then(() => console.log('opened')),
  (err) => { console.log(err.message); process.exitCode = 3; },
);`;

/** Opens the store of `dataDir` in a child process (as nobody when we are root). */
function openInChild(dataDir: string): { code: number | null; out: string; ms: number } {
  const node = [process.execPath, '--import', 'tsx', '-e', OPEN];
  const [command, ...args] = setpriv
    ? ['setpriv', `--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', ...node]
    : node;
  const { DATABASE_URL: _unused, ...env } = process.env;
  const started = Date.now();
  // SIGKILL: a child stuck in a synchronous loop never runs a signal handler.
  const run = spawnSync(command!, args, {
    cwd: codeRoot,
    env: { ...env, HANDRAIL_DATA_DIR: dataDir },
    encoding: 'utf8',
    timeout: 20_000,
    killSignal: 'SIGKILL',
  });
  return { code: run.status, out: `${run.stdout}${run.stderr}`.trim(), ms: Date.now() - started };
}

describe.skipIf(isRoot && !setpriv)(
  `opening the SQLite store${isRoot && !setpriv ? ' (skipped: root without setpriv)' : ''}`,
  () => {
    let tmp: string;
    beforeAll(() => {
      tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'handrail-open-'));
      fs.chmodSync(tmp, 0o755);
    });
    afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

    it('a store file this user may not write is refused at open, naming the file', async () => {
      const dataDir = path.join(tmp, 'read-only-file');
      fs.mkdirSync(dataDir, { mode: 0o777 });
      fs.chmodSync(dataDir, 0o777);
      await (await openStore({ dataDir })).close();
      const file = path.join(dataDir, 'handrail.sqlite');
      fs.chmodSync(file, 0o444);

      const opened = openInChild(dataDir);
      expect(opened.code, opened.out).toBe(3);
      expect(opened.out).toContain(file);
      expect(opened.out).toMatch(/readonly/);
    });

    it('a directory this user may not write is refused, naming the file', () => {
      const dataDir = path.join(tmp, 'read-only-dir');
      fs.mkdirSync(dataDir, { mode: 0o555 });
      const opened = openInChild(dataDir);
      expect(opened.code, opened.out).toBe(3);
      expect(opened.out).toContain(path.join(dataDir, 'handrail.sqlite'));
    });

    it.skipIf(!fs.existsSync('/proc/self'))(
      'a data dir that cannot be created (under /proc) fails within seconds, naming it',
      () => {
        const opened = openInChild('/proc/handrail');
        expect(opened.code, opened.out).toBe(3);
        expect(opened.out).toContain('/proc/handrail');
        expect(opened.ms).toBeLessThan(15_000);
      },
    );
  },
);
