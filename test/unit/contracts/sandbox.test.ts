import { join } from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';

// Temporal's bundler fails on Node built-ins, so a successful bundle proves contracts/ (and the
// ajv runtime helpers the standalone validators require) can run in the workflow sandbox.
describe('contracts in the workflow sandbox', () => {
  it('bundles with the standalone validators and without the ajv compiler', async () => {
    const { code } = await bundleWorkflowCode({
      workflowsPath: join(__dirname, 'sandbox-workflow.ts'),
      logger: { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} },
    });
    expect(code).toContain('ajv/dist/runtime/ucs2length');
    // date-time is decided by its pattern (scripts/contracts/build.ts createAjv): no format code.
    expect(code).not.toContain('ajv-formats');
    expect(code).not.toContain('ajv/dist/compile');
    expect(code).not.toContain('ajv/dist/standalone');
  }, 120_000);
});
