#!/usr/bin/env node
/* eslint-disable @typescript-eslint/no-require-imports -- a CommonJS launcher: tsx runs the TypeScript CLI in place. */
require('tsx/cjs');
// The ESM hook too: dynamic imports (the store picks its backend with one) go through Node's ESM loader.
import('tsx/esm').then(
  () => require('../src/operator/cli.ts'),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
