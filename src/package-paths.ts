/**
 * Where handrail's own files are, the same whether it runs from its sources (tests, tsx) or from
 * the built package under `node_modules/handrail/dist`: `codeRoot` is the tree the running
 * modules came from (the repository, or `dist/`), `packageRoot` the folder with handrail's
 * package.json, which also holds the shipped data (`data/`).
 */
import fs from 'node:fs';
import path from 'node:path';

/** The compiled (or source) tree: contracts/, workflows/, activities/, src/ sit under it. */
export const codeRoot = path.resolve(__dirname, '..');

/** `.ts` from the sources, `.js` from the build: the extension of a module file beside this one. */
export const moduleExtension = path.extname(__filename);

/** A module of handrail's by its path from the code root without extension, e.g. `contracts/rail`. */
export const modulePath = (fromCodeRoot: string): string => path.join(codeRoot, `${fromCodeRoot}${moduleExtension}`);

function findPackageRoot(from: string): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, 'package.json')) && fs.existsSync(path.join(dir, 'data'))) return dir;
    if (path.dirname(dir) === dir) return path.resolve(from, '..');
  }
}

/** handrail's package folder (the repository when run from its sources). */
export const packageRoot = findPackageRoot(codeRoot);
