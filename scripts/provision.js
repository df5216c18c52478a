#!/usr/bin/env node
// `node scripts/provision.js <command…>`: what the README's commands (and the other npm scripts
// that start servers) run first. It puts Node 22 first on PATH, installs the npm packages when
// they are missing or stale (scripts/ensure-deps.js, under that Node, so native modules are built
// for it), then runs the command, passing SIGTERM, SIGINT and SIGHUP on to it. Node 22 because
// Node 20 reached end of life in April 2026: a Node 22 already running is used as it is;
// otherwise it comes from the npm registry (the `node-<platform>-<arch>` package, the binary
// `npx node@22` runs) into a per-user cache, reused from then on. Plain Node: runs before any
// dependency is installed.
const { spawn, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { pathToFileURL } = require('node:url');

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
const options = { stdio: 'inherit', env, shell: process.platform === 'win32' };
const deps = spawnSync('node', [path.join(__dirname, 'ensure-deps.js')], options);
if (deps.status !== 0) process.exit(deps.status ?? 1);

/** `tsx FILE …` runs as `node --import tsx FILE …`, one process. tsx's CLI would stand between
 * this one and the command: it passes a signal on, then SIGKILLs the command unless that told it
 * within 30 ms that the signal arrived, which a busy event loop has not (a bench at work), so the
 * command died before its handlers could stop the servers it started. */
function inOneProcess(argv) {
  if (argv[0] !== 'tsx') return argv;
  let loader;
  try {
    loader = require.resolve('tsx', { paths: [path.resolve(__dirname, '..')] });
  } catch {
    return argv;
  }
  return ['node', '--import', pathToFileURL(loader).href, ...argv.slice(1)];
}
// Not spawnSync: a signal must reach the command, whose handlers stop the servers it started
// (src/devtools/stop-on-signal.ts). Blocked in spawnSync this process would die of it and leave
// the command running, orphaned, servers and all.
const [file, ...args] = inOneProcess(command);
const child = spawn(file, args, options);
const forward = (signal) => {
  if (child.exitCode === null && child.signalCode === null) child.kill(signal);
};
for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP']) process.on(signal, forward);
// `npm run` passes a SIGTERM on to the shell it runs the script in, and that shell dies of it
// without passing it on: this process only sees its parent go. Whoever started it is gone
// (signalled or killed): the command stops as on a SIGTERM.
const parent = process.ppid;
setInterval(() => {
  if (process.ppid !== parent) forward('SIGTERM');
}, 500).unref();
child.on('error', (err) => {
  console.error(`handrail: ${command[0]}: ${err.message}`);
  process.exit(1);
});
// It ends as the command did, its signal included.
child.on('exit', (code, signal) => {
  if (signal === null) process.exit(code ?? 1);
  process.removeAllListeners(signal);
  process.kill(process.pid, signal);
});
