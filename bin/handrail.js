#!/usr/bin/env node
/* eslint-disable @typescript-eslint/no-require-imports -- a CommonJS launcher for the built CLI. */
// The `handrail` command: the built CLI (`npm run build` writes dist/; the package ships it).
// From a checkout without a build, `npm run cli -- …` runs the same CLI from its sources.
require('../dist/src/operator/cli.js');
