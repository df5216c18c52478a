/**
 * The SDK evaluates a workflow bundle's modules again for every workflow run (and every replay),
 * so the product's bundle carries no zod: its schemas cost 26 ms a run to build (655 of them),
 * more than everything else the bundle evaluates. Workflow code imports contracts/rail.
 */
import fs from 'node:fs';
import { describe, expect, inject, it } from 'vitest';

describe('the product workflow bundle', () => {
  const code = fs.readFileSync(inject('workflowBundlePath'), 'utf8');
  const modules = [...code.matchAll(/^\/\*\*\*\/ "([^"]+)"$/gm)].map((m) => m[1]!);

  it('holds the rail and its contracts', () => {
    expect(modules).toEqual(
      expect.arrayContaining(['./workflows/index.ts', './contracts/rail.ts', './contracts/generated/validators.js']),
    );
  });

  it('is compiled to ES2022: no object-spread or class-field helper (src/worker/bundle.ts)', () => {
    expect(code).toContain('./workflows/handoff-job.ts');
    expect(code).not.toMatch(/function _object_spread\b|function _define_property\b/);
  });

  it('holds no zod module and no contracts module that builds zod schemas', () => {
    expect(modules.filter((m) => m.includes('/node_modules/zod/'))).toEqual([]);
    expect(modules).not.toContain('./contracts/index.ts');
  });
});
