/**
 * docs/authoring.md "Adding a stage" shows the files test/integration/authoring.test.ts runs
 * (test/integration/fixtures/authoring/), with imports spelled as a user writes them. This test
 * keeps the two from drifting: each block of the guide, its imports mapped to the fixture's
 * relative paths and its comments dropped, must equal the fixture file; and every name the guide
 * imports from `handrail…` must be a real export of that entry (package.json `exports`).
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(__dirname, '..', '..', '..');
const FIXTURES = path.join(ROOT, 'test', 'integration', 'fixtures', 'authoring');
/** The guide page that shows the example, and the fixture files it shows, in its order. */
const GUIDE = path.join('docs', 'authoring.md');
const SHOWN = ['notify-pipeline.ts', 'notify-activities.ts', 'notify-workflows.ts'];

/** The `ts` code blocks of one section of the guide, keyed by the file name on their first line (`// name.ts`). */
function sectionBlocks(guide: string, heading: string): Map<string, string> {
  const start = guide.indexOf(`\n## ${heading}\n`);
  if (start < 0) throw new Error(`${GUIDE} has no "## ${heading}" section`);
  const next = guide.indexOf('\n## ', start + 1);
  const section = guide.slice(start, next < 0 ? undefined : next);
  const blocks = new Map<string, string>();
  for (const [, code] of section.matchAll(/```ts\n([\s\S]*?)```/g)) {
    const name = /^\/\/ ([\w.-]+\.ts)\b/.exec(code!)?.[1];
    if (!name)
      throw new Error(`a ts block in "${heading}" does not start with "// <file>.ts":\n${code!.slice(0, 200)}`);
    blocks.set(name, code!);
  }
  return blocks;
}

/** User-facing specifier → the source module it names, from package.json `exports`
 * (`handrail/client` → `./dist/src/client.js` → `src/client.ts`). */
function packageEntries(): Map<string, string> {
  const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
    name: string;
    exports: Record<string, string | { default: string }>;
  };
  const entries = new Map<string, string>();
  for (const [sub, target] of Object.entries(pkg.exports)) {
    if (typeof target === 'string') continue;
    const source = target.default.replace(/^\.\/dist\//, '').replace(/\.js$/, '.ts');
    entries.set(sub === '.' ? pkg.name : `${pkg.name}/${sub.slice(2)}`, path.join(ROOT, source));
  }
  return entries;
}
const ENTRIES = packageEntries();

/** The specifier a fixture in FIXTURES would use for what the guide (files at the repository root) imports. */
function fixtureSpecifier(specifier: string): string {
  const entry = ENTRIES.get(specifier);
  let target: string;
  if (entry) target = entry.replace(/\.ts$/, '').replace(/\/index$/, '');
  else if (specifier.startsWith('.')) {
    // A sibling file of the guide stays a sibling; anything else is a path from the repository root.
    const shown = SHOWN.find((f) => `./${f.replace(/\.ts$/, '')}` === specifier);
    if (shown) return specifier;
    target = path.join(ROOT, specifier);
  } else return specifier; // a dependency such as zod
  const relative = path.relative(FIXTURES, target).split(path.sep).join('/');
  return relative.startsWith('.') ? relative : `./${relative}`;
}

/** Comments dropped (whole-line, and trailing after code), imports mapped, blank runs collapsed. */
function normalize(code: string, mapImports: boolean): string {
  const lines = code
    .split('\n')
    .filter((line) => !/^\s*\/\//.test(line))
    .map((line) => line.replace(/\s+\/\/ .*$/, '').trimEnd())
    .map((line) =>
      mapImports
        ? line.replace(
            /(\bfrom ')([^']+)(')/,
            (_m, a: string, spec: string, b: string) => `${a}${fixtureSpecifier(spec)}${b}`,
          )
        : line,
    );
  return lines
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

/** `{ a, b as c, type T }` of every `import … from 'handrail…'` line: the runtime names only. */
function handrailImports(code: string): { specifier: string; names: string[] }[] {
  return [...code.matchAll(/^import \{([^}]*)\} from '(handrail(?:\/[\w-]+)?)';$/gm)].map(([, names, specifier]) => ({
    specifier: specifier!,
    names: names!
      .split(',')
      .map((n) => n.trim())
      .filter((n) => n && !n.startsWith('type '))
      .map((n) => n.split(/\s+as\s+/)[0]!),
  }));
}

const guide = fs.readFileSync(path.join(ROOT, GUIDE), 'utf8');
const blocks = sectionBlocks(guide, 'Adding a stage');

describe('docs/authoring.md "Adding a stage" is the example the suite runs', () => {
  it('shows every fixture file of the authoring test', () => {
    expect([...blocks.keys()].filter((name) => SHOWN.includes(name))).toEqual(SHOWN);
  });

  it.each(SHOWN)('%s: the block in the guide equals the fixture file', (name) => {
    const fixture = fs.readFileSync(path.join(FIXTURES, name), 'utf8');
    expect(normalize(blocks.get(name) ?? '', true)).toBe(normalize(fixture, false));
  });

  it('imports only names the package entries export', async () => {
    const wanted = [...blocks.values()].flatMap(handrailImports);
    expect(wanted.length).toBeGreaterThan(0);
    for (const { specifier, names } of wanted) {
      const file = ENTRIES.get(specifier);
      expect(file, `${specifier} is not in package.json exports`).toBeDefined();
      const mod = (await import(file!)) as Record<string, unknown>;
      for (const name of names) expect(mod[name], `${specifier} exports ${name}`).toBeDefined();
    }
  });
});
