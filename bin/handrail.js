#!/usr/bin/env node
/* eslint-disable @typescript-eslint/no-require-imports -- a CommonJS launcher: tsx runs the TypeScript CLI in place. */
require('tsx/cjs');
require('../src/operator/cli.ts');
