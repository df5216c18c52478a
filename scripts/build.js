#!/usr/bin/env node
// `npm run build`: the published package under dist/ — tsc over tsconfig.build.json (JavaScript,
// declarations, source maps), plus the precompiled contract validators, which are JavaScript
// already (scripts/contracts/generate.ts writes them) and so are copied, not compiled.
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const dist = path.join(root, 'dist');
fs.rmSync(dist, { recursive: true, force: true });
execFileSync(
  process.execPath,
  [require.resolve('typescript/bin/tsc', { paths: [root] }), '-p', path.join(root, 'tsconfig.build.json')],
  { stdio: 'inherit', cwd: root },
);
fs.mkdirSync(path.join(dist, 'contracts', 'generated'), { recursive: true });
for (const file of ['validators.js', 'validators.d.ts']) {
  fs.copyFileSync(path.join(root, 'contracts', 'generated', file), path.join(dist, 'contracts', 'generated', file));
}
console.log(`handrail: built ${path.relative(process.cwd(), dist) || 'dist'}/`);
