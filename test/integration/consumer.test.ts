/**
 * handrail as a stranger gets it: the packed tarball installed into an empty folder outside the
 * repository, `npx handrail init` writing a project from the template the package ships
 * (templates/init, checked in), and that project's own commands — its type check
 * (`moduleResolution: nodenext`) and `npm test`, which builds its worker and runs its own pipeline
 * end to end on a dev server of its own — all with plain Node: no tsx, no path into the package
 * but its `exports`. A deep import, a `.ts` in the package, a missing runtime dependency or a
 * second copy of the workflow SDK in the bundle fails one of these steps.
 *
 * One `npm install` (the tarball, TypeScript and Node's types, into the folder the project is made
 * in) serves both: the project resolves them from its parent folder, as Node and TypeScript do.
 * A second install inside the project would build the native SQLite module again, minutes on CI;
 * the note of the change that added this test shows that longer path run by hand.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { codeRoot } from '../../src/config';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'handrail-consumer-'));
const installer = path.join(tmp, 'installer');
const app = path.join(installer, 'demo-pipeline');

interface Run {
  code: number;
  out: string;
}

/** Runs a command as a user would in a shell, in `cwd`; its output is kept for the assertion message. */
function run(cwd: string, cmd: string, args: string[], timeoutMs = 600_000): Promise<Run> {
  // The dev server the project's test starts resolves the `temporal` CLI as the suite's did.
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    npm_config_audit: 'false',
    npm_config_fund: 'false',
    npm_config_update_notifier: 'false',
  };
  delete env.NODE_OPTIONS;
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
    fs.writeFileSync(
      path.join(installer, 'package.json'),
      `${JSON.stringify({ name: 'installer', private: true }, null, 2)}\n`,
    );
    const install = await run(installer, 'npm', ['install', tarball, 'typescript@~5.9.3', '@types/node@^22.10.0']);
    expect(install.code, install.out).toBe(0);
    const entries = [
      'handrail',
      'handrail/contracts',
      'handrail/workflow',
      'handrail/client',
      'handrail/replay',
      'handrail/testing',
      'handrail/pipelines',
      'handrail/pipelines/worker',
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
});
