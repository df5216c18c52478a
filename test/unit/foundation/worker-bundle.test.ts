import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import * as validators from '../../../contracts/generated/validators';
import { codeRoot } from '../../../src/config';
import { SHARED_WORKFLOW_MODULES } from '../../../src/worker/bundle';

/** The modules a file pulls in at run time (type-only imports are erased; the generated
 * validators `require`), resolved to files. */
function runtimeImports(file: string): { local: string[]; external: string[] } {
  const source = fs.readFileSync(file, 'utf8');
  const specs = [
    ...[...source.matchAll(/^(?:import|export)\s(?!type\b)[^;]*?from\s+'([^']+)'/gms)].map((m) => m[1]!),
    ...[...source.matchAll(/\brequire\("([^"]+)"\)/g)].map((m) => m[1]!),
  ];
  const local: string[] = [];
  const external: string[] = [];
  for (const spec of specs) {
    if (!spec.startsWith('.')) {
      external.push(spec);
      continue;
    }
    const base = path.resolve(path.dirname(file), spec);
    const found = [`${base}.ts`, `${base}.js`, path.join(base, 'index.ts')].find((candidate) =>
      fs.existsSync(candidate),
    );
    expect(found, `${spec} in ${file}`).toBeDefined();
    local.push(found!);
  }
  return { local, external };
}

/** Every module the shared ones load, themselves included. */
function sharedClosure(): string[] {
  const seen = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    runtimeImports(file).local.forEach(visit);
  };
  SHARED_WORKFLOW_MODULES.forEach(visit);
  return [...seen];
}

// A preloaded module, and everything it imports, is shared by every workflow run and frozen by the
// SDK: it must hold no state of its own and build nothing that mutates itself later (zod schemas
// do). So the shared set stays inside contracts/ and the rail's decisions in workflows/rail/ (both
// pure by rule), needs no package but the hash
// library and the one ajv runtime helper the generated validators call (a pure function), and
// declares no module-level `let`, `var` or collection. What it builds at load in a
// `const` (the default version registry, the pipelines) is only read afterwards.
const SHARED_PACKAGES = [/^@noble\/hashes\//, /^ajv\/dist\/runtime\/ucs2length$/];
describe('modules the workflow bundle shares across runs', () => {
  const closure = sharedClosure();
  const relative = (file: string) => path.relative(codeRoot, file);

  it('shares the contracts the rail runs on every hop, and no pipeline (a plugin preloads its own)', () => {
    expect(closure.map(relative)).toEqual(
      expect.arrayContaining(['contracts/validate.ts', 'contracts/generated/validators.js']),
    );
    expect(closure.map(relative).filter((file) => file.startsWith('contracts/pipelines/'))).toEqual([]);
  });

  it.each(closure.map((file) => [relative(file), file]))(
    '%s is a pure module importing no other package',
    (_name, file) => {
      expect(relative(file)).toMatch(/^(contracts|workflows\/rail)\//);
      for (const spec of runtimeImports(file).external)
        expect(
          SHARED_PACKAGES.some((allowed) => allowed.test(spec)),
          spec,
        ).toBe(true);
    },
  );

  it.each(closure.filter((file) => file.endsWith('.ts')).map((file) => [relative(file), file]))(
    '%s declares no module-level variable or collection',
    (_name, file) => {
      const source = fs.readFileSync(file, 'utf8');
      expect(source).not.toMatch(/^(export\s+)?(let|var)\s/m);
      expect(source).not.toMatch(/^(export\s+)?const\s+\w+(:[^=]+)?=\s*new\s+(Map|Set|WeakMap|WeakSet)\b/m);
    },
  );
});

// The SDK deep-freezes the shared modules' exports. ajv's validators report through a property of
// their own, which a frozen function could not take; the generated module keeps it behind an
// accessor (scripts/contracts/build.ts), so a frozen validator still says what is wrong.
describe('generated validators once frozen as the SDK freezes shared modules', () => {
  // The SDK's deepFreeze freezes an exported function itself, not what it holds.
  for (const validate of Object.values(validators)) Object.freeze(validate);

  it('still reports each call’s own errors', () => {
    expect(validators.humanDecision({ action: 'approve' })).toBe(false);
    expect(validators.humanDecision.errors?.map((e) => e.params)).toContainEqual({ missingProperty: 'actor' });
    expect(validators.humanDecision({ action: 'approve', actor: 'ops@example.com' })).toBe(true);
    expect(validators.humanDecision.errors ?? null).toBeNull();
  });
});
