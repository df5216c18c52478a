/**
 * handrail as a stranger gets it: the packed tarball installed into an empty folder outside the
 * repository, `npx handrail init` writing a project from the template the package ships
 * (templates/init, checked in), and that project's own commands — its type check
 * (`moduleResolution: nodenext`) and `npm test`, which builds its worker and runs its own pipeline
 * end to end on a dev server of its own — all with plain Node: no tsx, no path into the package
 * but its `exports`. A deep import, a `.ts` in the package, a missing runtime dependency or a
 * second copy of the workflow SDK in the bundle fails one of these steps.
 *
 * One `npm ci` (the tarball, TypeScript and Node's types, into the folder the project is made
 * in, pinned by a lock cut from the repository's: test/helpers/consumer-lock.ts) serves both: the
 * project resolves them from its parent folder, as Node and TypeScript do.
 * A second install inside the project would build the native SQLite module again, minutes on CI;
 * the note of the change that added this test shows that longer path run by hand.
 *
 * Then the project's servers: `npx handrail serve api|a2a --plugin ./dist/src/plugin.js` serve its
 * own pipeline (the records API's project, the A2A card's skill) against the suite's dev server,
 * and `serve codec` encodes; each is started, probed once and stopped (SIGTERM).
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { codeRoot } from '../../src/config';
import { freePort } from '../../src/devtools/devserver/server';
import { consumerProject, repositoryLock } from '../helpers/consumer-lock';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'handrail-consumer-'));
const installer = path.join(tmp, 'installer');
const app = path.join(installer, 'demo-pipeline');

interface Run {
  code: number;
  out: string;
}

/** This process's environment as a user's shell has it, plus `extra`. */
function userEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  // The dev server the project's test starts resolves the `temporal` CLI as the suite's did.
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    npm_config_audit: 'false',
    npm_config_fund: 'false',
    npm_config_update_notifier: 'false',
    ...extra,
  };
  delete env.NODE_OPTIONS;
  return env;
}

/** Runs a command as a user would in a shell, in `cwd`; its output is kept for the assertion message. */
function run(cwd: string, cmd: string, args: string[], timeoutMs = 600_000): Promise<Run> {
  const env = userEnv();
  return new Promise((resolve) => {
    execFile(cmd, args, { cwd, env, timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      resolve({
        code: err ? (typeof err.code === 'number' ? err.code : 1) : 0,
        out: `$ ${cmd} ${args.join(' ')}\n${stdout}${stderr}`,
      });
    });
  });
}

let tarball = '';

beforeAll(async () => {
  fs.mkdirSync(installer);
  // `npm pack` runs `prepack`, which builds dist/.
  const packed = await run(codeRoot, 'npm', ['pack', '--silent', '--pack-destination', tmp]);
  expect(packed.code, packed.out).toBe(0);
  tarball = path.join(tmp, packed.out.trim().split('\n').pop()!.trim());
  expect(fs.existsSync(tarball), packed.out).toBe(true);
}, 300_000);

afterAll(() => {
  fs.rmSync(tmp, { recursive: true, force: true });
});

describe('the packed package, from outside the repository', () => {
  it('installs from the tarball and loads every entry with plain node', async () => {
    // The tarball and the template's tools, at the versions of the repository's package-lock.json
    // (test/helpers/consumer-lock.ts): `npm ci` resolves no range, so a registry in the middle of a
    // publish cannot fail it, and --prefer-offline takes what the npm cache holds.
    const { packageJson, lock } = consumerProject(installer, 'installer', tarball, {
      typescript: '~5.9.3',
      '@types/node': '^22.10.0',
    });
    fs.writeFileSync(path.join(installer, 'package.json'), `${JSON.stringify(packageJson, null, 2)}\n`);
    fs.writeFileSync(path.join(installer, 'package-lock.json'), `${JSON.stringify(lock, null, 2)}\n`);
    const install = await run(installer, 'npm', ['ci', '--prefer-offline']);
    expect(install.code, install.out).toBe(0);
    // Installed as locked: every package at its locked version (the platforms' optional binaries
    // but this one's are absent), `@ai-sdk/provider` at the repository's.
    const installed = (location: string): string | undefined => {
      const file = path.join(installer, location, 'package.json');
      return fs.existsSync(file)
        ? (JSON.parse(fs.readFileSync(file, 'utf8')) as { version: string }).version
        : undefined;
    };
    const drift = Object.entries(lock.packages).filter(
      ([location, entry]) =>
        location !== '' && installed(location) !== entry.version && !(entry.optional && !installed(location)),
    );
    expect(drift).toEqual([]);
    expect(installed('node_modules/@ai-sdk/provider')).toBe(repositoryLock()['node_modules/@ai-sdk/provider']!.version);
    const entries = [
      'handrail',
      'handrail/contracts',
      'handrail/workflow',
      'handrail/client',
      'handrail/replay',
      'handrail/testing',
      'handrail/pipelines',
      'handrail/pipelines/worker',
      'handrail/servers',
    ];
    const load = await run(installer, process.execPath, [
      '-e',
      `for (const e of ${JSON.stringify(entries)}) require(e); console.log('loaded')`,
    ]);
    expect(load.out).toContain('loaded');
    // One copy of the workflow SDK: the user's (handrail takes it as a peer).
    const copies = await run(installer, 'npm', ['ls', '@temporalio/workflow', '--all', '--parseable']);
    expect(
      copies.out
        .trim()
        .split('\n')
        .filter((l) => l.endsWith(path.join('node_modules', '@temporalio', 'workflow'))),
    ).toHaveLength(1);
  }, 600_000);

  it('`npx handrail init` writes a project whose type check and own test pass', async () => {
    const init = await run(installer, 'npx', ['--no-install', 'handrail', 'init', 'demo-pipeline']);
    expect(init.code, init.out).toBe(0);
    // The project depends on the very tarball its folder installed.
    const spec = JSON.parse(fs.readFileSync(path.join(app, 'package.json'), 'utf8')).dependencies.handrail as string;
    expect(spec).toBe(`file:../../${path.basename(tarball)}`);
    expect(fs.existsSync(path.resolve(app, spec.slice('file:'.length)))).toBe(true);
    const typecheck = await run(app, 'npx', ['--no-install', 'tsc', '--noEmit', '-p', '.']);
    expect(typecheck.code, typecheck.out).toBe(0);
    expect(JSON.parse(fs.readFileSync(path.join(app, 'tsconfig.json'), 'utf8')).compilerOptions.moduleResolution).toBe(
      'nodenext',
    );
    const test = await run(app, 'npm', ['test']);
    expect(test.code, test.out).toBe(0);
    expect(test.out).toMatch(/# pass 4/);
    expect(test.out).toMatch(/# fail 0/);
    // Nothing in the project reaches past the package's exports or needs tsx.
    const sources = fs.readdirSync(path.join(app, 'src')).map((f) => fs.readFileSync(path.join(app, 'src', f), 'utf8'));
    for (const source of sources)
      expect(source).not.toMatch(/from 'handrail\/(?!contracts'|workflow'|client'|testing'|replay'|pipelines)/);
    expect(fs.readFileSync(path.join(app, 'package.json'), 'utf8')).not.toContain('tsx');
  }, 900_000);

  it("`npx handrail serve api|a2a --plugin` serve the project's own pipeline; `serve codec` encodes", async () => {
    const plugin = path.join(app, 'dist', 'src', 'plugin.js');
    expect(fs.existsSync(plugin), 'the previous test built the project').toBe(true);
    const token = 'tok-consumer-ana';
    const [apiPort, a2aPort, codecPort] = [await freePort(), await freePort(), await freePort()];
    const env = userEnv({
      TEMPORAL_ADDRESS: inject('temporalAddress'),
      TEMPORAL_NAMESPACE: inject('namespace'),
      HANDRAIL_DATA_DIR: path.join(tmp, 'serve-data'),
      HANDRAIL_API_USERS: '',
      HANDRAIL_API_USERS_JSON: JSON.stringify({
        ana: { token_sha256: crypto.createHash('sha256').update(token).digest('hex'), role: 'user' },
      }),
      HANDRAIL_API_PORT: String(apiPort),
      HANDRAIL_A2A_PORT: String(a2aPort),
      HANDRAIL_A2A_URL: '',
      HANDRAIL_CODEC_KEYS: JSON.stringify({ keys: [{ id: 'k1', key: crypto.randomBytes(32).toString('base64') }] }),
      HANDRAIL_CODEC_KEYS_FILE: '',
      HANDRAIL_CODEC_URL: `http://127.0.0.1:${codecPort}`,
    });
    const api = `http://127.0.0.1:${apiPort}`;
    const a2a = `http://127.0.0.1:${a2aPort}`;
    const codec = `http://127.0.0.1:${codecPort}`;
    // All three at once: each start is mostly npx and loading the package.
    const servers = [
      startServer(['serve', 'api', '--plugin', './dist/src/plugin.js'], env, `${api}/openapi.json`),
      startServer(['serve', 'a2a', '--plugin', './dist/src/plugin.js'], env, `${a2a}/.well-known/agent-card.json`),
      startServer(['serve', 'codec'], env, `${codec}/encode`),
    ];
    try {
      await Promise.all(servers.map((s) => s.ready));
      const auth = { authorization: `Bearer ${token}` };
      // The records API's projects are the plugin's pipelines, not the built-ins.
      const openapi = await fetch(`${api}/openapi.json`);
      expect(openapi.status).toBe(200);
      expect(((await openapi.json()) as { openapi: string }).openapi).toMatch(/^3\.1/);
      const own = await fetch(`${api}/workspaces/default/projects/expense-approval/handoffs`, { headers: auth });
      expect(own.status, await own.clone().text()).toBe(200);
      expect(await own.json()).toEqual({ handoffs: [] });
      const builtIn = await fetch(`${api}/workspaces/default/projects/ticket-triage/handoffs`, { headers: auth });
      expect(builtIn.status).toBe(404);
      // The A2A card: one skill, the project's pipeline.
      const card = (await (await fetch(`${a2a}/.well-known/agent-card.json`)).json()) as {
        skills: { id: string }[];
        supportedInterfaces: { url: string }[];
      };
      expect(card.skills.map((s) => s.id)).toEqual(['expense-approval']);
      expect(card.supportedInterfaces[0]!.url).toBe(`${a2a}/a2a`);
      // The codec server encrypts with the configured key.
      const encoded = await fetch(`${codec}/encode`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          payloads: [{ metadata: { encoding: Buffer.from('json/plain').toString('base64') }, data: 'e30=' }],
        }),
      });
      expect(encoded.status).toBe(200);
      const [payload] = ((await encoded.json()) as { payloads: { metadata: Record<string, string> }[] }).payloads;
      expect(Buffer.from(payload!.metadata['encryption-key-id']!, 'base64').toString()).toBe('k1');
    } finally {
      await Promise.all(servers.map((s) => s.stop()));
    }
    // SIGTERM stopped each server, not only npx: nothing answers any more.
    for (const url of [api, a2a, codec]) await expect(fetch(url)).rejects.toThrow();
    // Each said where it listened, and none reported an error.
    for (const s of servers) expect(s.output()).toMatch(/ on http:\/\/127\.0\.0\.1:\d+ \(/);
    for (const s of servers) expect(s.output()).not.toMatch(/^handrail: /m);
  }, 120_000);
});

/**
 * `npx handrail <args>` in the project, in a process group of its own (npx runs the command
 * through a shell: stopping the group is what Ctrl-C does). `ready` resolves once `probe` answers
 * (any HTTP status), and rejects with the output if the process ends first.
 */
function startServer(args: string[], env: NodeJS.ProcessEnv, probe: string) {
  const child: ChildProcess = spawn('npx', ['--no-install', 'handrail', ...args], { cwd: app, env, detached: true });
  let out = `$ npx handrail ${args.join(' ')}\n`;
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const ready = (async () => {
    let ended = false;
    void exited.then(() => (ended = true));
    for (const deadline = Date.now() + 60_000; Date.now() < deadline && !ended;) {
      try {
        await fetch(probe, { signal: AbortSignal.timeout(1_000) });
        return;
      } catch {
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    throw new Error(`${probe} did not answer\n${out}`);
  })();
  return {
    ready,
    output: () => out,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, 'SIGTERM');
      await exited;
      // npx ends at once; the server closes its sockets (and Temporal client, store) just after.
      for (const deadline = Date.now() + 10_000; Date.now() < deadline;) {
        try {
          await fetch(probe, { signal: AbortSignal.timeout(500) });
          await new Promise((r) => setTimeout(r, 100));
        } catch {
          return;
        }
      }
    },
  };
}
