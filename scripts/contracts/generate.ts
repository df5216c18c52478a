/**
 * Regenerates contracts/schema, contracts/generated and contracts/fixtures from the zod source.
 *   npx tsx scripts/contracts/generate.ts           write the files
 *   npx tsx scripts/contracts/generate.ts --check   exit 1 if the committed files drift
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { FIXTURE_DIR, GENERATED_DIR, SCHEMA_DIR, buildOutputs } from './build';

const root = resolve(__dirname, '../..');
const outputs = buildOutputs();
const check = process.argv.includes('--check');

const read = (path: string) => {
  try {
    return readFileSync(join(root, path), 'utf8');
  } catch {
    return undefined;
  }
};

// Files in the generated folders that the source no longer produces are drift too.
const stale = [SCHEMA_DIR, GENERATED_DIR, FIXTURE_DIR]
  .flatMap((dir) => {
    try {
      return readdirSync(join(root, dir)).map((f) => `${dir}/${f}`);
    } catch {
      return [];
    }
  })
  .filter((path) => !outputs.has(path));
const changed = [...outputs].filter(([path, content]) => read(path) !== content).map(([path]) => path);

if (check) {
  for (const path of [...changed, ...stale]) console.error(`drift: ${path}`);
  if (changed.length + stale.length > 0) {
    console.error('run: npx tsx scripts/contracts/generate.ts');
    process.exit(1);
  }
  console.log(`contracts: ${outputs.size} generated files up to date`);
} else {
  for (const path of stale) rmSync(join(root, path));
  for (const path of changed) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), outputs.get(path) ?? '');
  }
  console.log(
    `contracts: ${changed.length} written, ${stale.length} removed, ${outputs.size - changed.length} unchanged`,
  );
}
