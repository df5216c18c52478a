import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { SHARED_WORKFLOW_MODULES } from '../../../src/worker/bundle';

// A preloaded module is shared by every workflow run and frozen by the SDK: it must hold no state
// and build nothing that mutates itself later (zod schemas do). Its imports are kept to the hash
// library and the other shared modules, so nothing else is shared by accident.
describe('modules the workflow bundle shares across runs', () => {
  const shared = new Set(SHARED_WORKFLOW_MODULES);
  it.each(SHARED_WORKFLOW_MODULES.map((file) => [path.basename(file), file]))('%s imports only @noble/hashes and other shared modules', (_name, file) => {
    const source = fs.readFileSync(file, 'utf8');
    const imports = [...source.matchAll(/^import\s[^;]*?from\s+'([^']+)'/gms)].map((m) => m[1]!);
    for (const spec of imports) {
      if (spec.startsWith('.')) expect(shared, `${spec} in ${file}`).toContain(path.resolve(path.dirname(file), `${spec}.ts`));
      else expect(spec).toMatch(/^@noble\/hashes\//);
    }
  });
});
