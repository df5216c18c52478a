/**
 * A long command that starts servers stops them on SIGTERM and SIGINT, as on success
 * (src/devtools/stop-on-signal.ts): a bench's dev-server lab and a harness's own cluster
 * (PostgreSQL, Temporal server, Web UI: `npm run bench -- --cluster`), started by a small command
 * (fixtures/lab-signals/lab-until-signal.ts, busy as a bench is) that is then signalled, through
 * `npm run` and scripts/provision.js as the npm scripts run it, or straight. Afterwards no process
 * of theirs runs, their ports are closed and their data dir is gone. Before: the command died at
 * once (its data dir left, a cluster's parts running); through `npm run` the shell died and left
 * the command running; through tsx's CLI the busy command was SIGKILLed 30 ms after the signal.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { codeRoot, loadConfig } from '../../src/config';
import { ensureClusterBinaries } from '../../src/devtools/cluster/binaries';
import { clusterDown } from '../../src/devtools/cluster/lifecycle';
import { clusterSettings } from '../../src/devtools/cluster/settings';
import { portOpen } from '../../src/devtools/devserver/server';
import { onPath } from '../../src/devtools/tool-cache';

const FIXTURE = path.join(__dirname, 'fixtures', 'lab-signals', 'lab-until-signal.ts');
/** Off every other cluster's (default, cluster test, chaos, bench, rollout): offset 4500. */
const CLUSTER_PORTS = { postgres: 5933, frontend: 11733, ui: 11833 };
// This Node first, as scripts/provision.js leaves it for the command.
const env = { ...process.env, PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH}` };
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'handrail-lab-signals-'));

afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

interface Started {
  child: ChildProcess;
  exited: Promise<number | null>;
  /** What the command printed once its servers were up. */
  lab: { pid: number; dir: string; ports: number[] };
  output: () => string;
}

/** Starts `argv` in a process group of its own and waits for the lab's line. */
async function start(argv: string[], cwd = codeRoot): Promise<Started> {
  const child = spawn(argv[0]!, argv.slice(1), { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  for (const deadline = Date.now() + 240_000; Date.now() < deadline;) {
    const line = out.split('\n').find((l) => l.startsWith('{"pid"'));
    if (line) return { child, exited, lab: JSON.parse(line) as Started['lab'], output: () => out };
    if (child.exitCode !== null) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`the lab did not come up:\n${out}`);
}

/** Processes whose command line names `dir` (a dev server's SQLite file, a cluster part's root). */
function processesUnder(dir: string): string[] {
  return fs.readdirSync('/proc').flatMap((entry) => {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) return [];
    try {
      const cmdline = fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').join(' ');
      return cmdline.includes(dir) ? [`${entry} ${cmdline.trim()}`] : [];
    } catch {
      return [];
    }
  });
}

/** What is left of the lab once `within` ms have passed with something left. */
async function leftOver(lab: Started['lab'], within: number) {
  const look = async () => ({
    processes: processesUnder(lab.dir),
    open: (await Promise.all(lab.ports.map(async (p) => ((await portOpen('127.0.0.1', p)) ? [p] : [])))).flat(),
    dir: fs.existsSync(lab.dir),
  });
  let left = await look();
  for (const deadline = Date.now() + within; Date.now() < deadline; left = await look()) {
    if (left.processes.length === 0 && left.open.length === 0 && !left.dir) break;
    await new Promise((r) => setTimeout(r, 250));
  }
  return left;
}

/** Whatever the old code left behind: the command's group (a dev server's tether with it), and its data. */
function killGroup(started: Started | undefined): void {
  try {
    if (started?.child.pid) process.kill(-started.child.pid, 'SIGKILL');
  } catch {
    // Gone already.
  }
}

const NOTHING_LEFT = { processes: [], open: [], dir: false };

describe('a command that started servers stops them on SIGTERM and SIGINT', () => {
  it('`npm run` of a dev-server lab through scripts/provision.js, SIGTERM to npm: the signal reaches the command, which stops its dev server and removes its data', async () => {
    const project = path.join(tmp, 'npm-run');
    fs.mkdirSync(project);
    fs.writeFileSync(
      path.join(project, 'package.json'),
      JSON.stringify({
        name: 'lab-signals',
        private: true,
        // As package.json's scripts run a bench.
        scripts: { lab: `node ${path.join(codeRoot, 'scripts', 'provision.js')} tsx ${FIXTURE} dev` },
      }),
    );
    let started: Started | undefined;
    try {
      started = await start(['npm', 'run', '--silent', 'lab'], project);
      expect(await portOpen('127.0.0.1', started.lab.ports[0]!)).toBe(true);
      expect(processesUnder(started.lab.dir)).not.toEqual([]);
      process.kill(started.child.pid!, 'SIGTERM');
      await started.exited;
      expect(await leftOver(started.lab, 30_000), started.output()).toEqual(NOTHING_LEFT);
      expect(started.output()).toContain('handrail: SIGTERM: stopping the servers this command started');
    } finally {
      killGroup(started);
      if (started) fs.rmSync(started.lab.dir, { recursive: true, force: true });
    }
  }, 180_000);

  it('SIGINT to the command itself (a dev-server lab): it stops the server, removes its data and exits 130', async () => {
    let started: Started | undefined;
    try {
      started = await start([process.execPath, '--import', 'tsx', FIXTURE, 'dev']);
      process.kill(started.lab.pid, 'SIGINT');
      const code = await started.exited;
      expect(await leftOver(started.lab, 30_000), started.output()).toEqual(NOTHING_LEFT);
      expect(code).toBe(130);
    } finally {
      killGroup(started);
      if (started) fs.rmSync(started.lab.dir, { recursive: true, force: true });
    }
  }, 180_000);

  it("a harness's own cluster (PostgreSQL, Temporal server, Web UI), SIGTERM to scripts/provision.js: every part stopped, its data removed, exit 143", async (ctx) => {
    try {
      ensureClusterBinaries(process.env, () => undefined);
    } catch (err) {
      if (onPath('go', process.env)) throw err;
      ctx.skip(`no cluster binaries: ${(err as Error).message}`);
    }
    const { postgres, frontend, ui } = CLUSTER_PORTS;
    let started: Started | undefined;
    try {
      started = await start([
        process.execPath,
        path.join(codeRoot, 'scripts', 'provision.js'),
        'tsx',
        FIXTURE,
        'cluster',
        String(postgres),
        String(frontend),
        String(ui),
      ]);
      for (const port of started.lab.ports) expect(await portOpen('127.0.0.1', port)).toBe(true);
      process.kill(started.child.pid!, 'SIGTERM');
      const code = await started.exited;
      expect(await leftOver(started.lab, 30_000), started.output()).toEqual(NOTHING_LEFT);
      expect(code).toBe(143);
    } finally {
      killGroup(started);
      // Its parts run detached, out of the command's group: what the old code left, taken down.
      if (started && fs.existsSync(started.lab.dir)) {
        await clusterDown(
          clusterSettings(loadConfig({ HANDRAIL_DATA_DIR: started.lab.dir }), CLUSTER_PORTS),
          () => undefined,
        );
        fs.rmSync(started.lab.dir, { recursive: true, force: true });
      }
    }
  }, 300_000);
});
