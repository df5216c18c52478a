#!/usr/bin/env node
// `node scripts/provision.js <command…>`: what the README's commands (and the other npm scripts
// that start servers) run first. It puts Node 22 first on PATH, installs the npm packages when
// they are missing or stale (scripts/ensure-deps.js, under that Node, so native modules are built
// for it), then runs the command. Node 22 because Node 20 reached end of life in April 2026: a Node
// 22 already running is used as it is; otherwise it comes from the npm registry (the
// `node-<platform>-<arch>` package, the binary `npx node@22` runs) into a per-user cache, reused
// from then on. Plain Node: runs before any dependency is installed.
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const MAJOR = 22;
const command = process.argv.slice(2);
if (command.length === 0) {
  console.error('usage: node scripts/provision.js <command> [args…]');
  process.exit(2);
}

/** The folder holding a Node 22 `node` binary, provisioned on first use. */
function node22Home() {
  const pkg = `node-${process.platform}-${process.arch}`;
  const cache = path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'), 'handrail', `node-${MAJOR}`);
  const home = path.join(cache, 'node_modules', pkg);
  if (!fs.existsSync(path.join(home, 'bin', 'node'))) {
    console.error(
      `handrail: Node ${MAJOR} is needed (this is ${process.version}); installing ${pkg}@${MAJOR} from the npm registry into ${cache} ...`,
    );
    fs.mkdirSync(cache, { recursive: true });
    const npm = spawnSync(
      'npm',
      [
        'install',
        '--prefix',
        cache,
        '--no-save',
        '--no-package-lock',
        '--no-audit',
        '--no-fund',
        '--loglevel=error',
        `${pkg}@${MAJOR}`,
      ],
      { stdio: 'inherit' },
    );
    if (npm.status !== 0 || !fs.existsSync(path.join(home, 'bin', 'node'))) {
      console.error(
        `handrail: could not install Node ${MAJOR} (npm exited ${npm.status}). Install Node ${MAJOR} LTS yourself and run the command again.`,
      );
      process.exit(1);
    }
  }
  return home;
}

const env = { ...process.env };
if (Number(process.versions.node.split('.')[0]) < MAJOR) {
  const home = node22Home();
  env.PATH = `${path.join(home, 'bin')}${path.delimiter}${env.PATH}`;
  // node-gyp builds native modules (better-sqlite3) against these headers instead of downloading them.
  env.npm_config_nodedir = home;
}
const run = (argv) => spawnSync(argv[0], argv.slice(1), { stdio: 'inherit', env, shell: process.platform === 'win32' });
const deps = run(['node', path.join(__dirname, 'ensure-deps.js')]);
if (deps.status !== 0) process.exit(deps.status ?? 1);
const child = run(command);
if (child.error) {
  console.error(`handrail: ${command[0]}: ${child.error.message}`);
  process.exit(1);
}
process.exit(child.status ?? 1);
