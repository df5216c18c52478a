#!/usr/bin/env node
// Runs before `npm run demo|server|test` on a fresh clone: installs npm packages when missing
// and makes sure the native SQLite binding loads (npm 11 may skip install scripts it has not
// been told to allow, which leaves better-sqlite3 unbuilt). Plain Node: no dependencies.
const { execSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const run = (cmd) => execSync(cmd, { cwd: root, stdio: 'inherit' });

const installed = fs.existsSync(path.join(root, 'node_modules', '.package-lock.json'));
const lockNewer =
  installed &&
  fs.statSync(path.join(root, 'package-lock.json')).mtimeMs >
    fs.statSync(path.join(root, 'node_modules', '.package-lock.json')).mtimeMs;
if (!installed || lockNewer) {
  console.error('handrail: installing npm packages (npm ci) ...');
  run('npm ci --no-audit --no-fund');
}

function sqliteLoads() {
  try {
    execSync(`node -e "new (require('better-sqlite3'))(':memory:').close()"`, { cwd: root, stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}
if (!sqliteLoads()) {
  console.error('handrail: building the better-sqlite3 native binding (npm rebuild) ...');
  run('npm rebuild better-sqlite3');
  if (!sqliteLoads()) {
    console.error(
      'handrail: better-sqlite3 still does not load; a C/C++ toolchain (gcc, make, python3) is needed to build it.',
    );
    process.exit(1);
  }
}
