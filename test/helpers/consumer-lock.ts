/**
 * The consumer test's install, pinned: a package.json and package-lock.json for a project that
 * installs the packed tarball, so `npm ci` installs the versions this repository was tested with
 * instead of resolving every range again (a registry in the middle of a publish then failed the
 * test with ETARGET for `@ai-sdk/provider`).
 *
 * The lock is cut from the repository's own package-lock.json: what the tarball's dependencies and
 * peer dependencies reach, and the consumer's tools, found by Node's resolution in the repository's
 * (hoisted) tree. A part of a valid tree holding everything its members resolve to is a valid tree,
 * so each package sits where it sits in the repository. What the repository's tree does not hold
 * comes from test/fixtures/consumer-pins.json (see its note). Not an npm-shrinkwrap.json in the
 * package: that would pin every user's tree too, in handrail's own folder, a second
 * `@temporalio/common` beside the project's with it, which is not a library's to decide
 * (docs/reference.md, the test suite).
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { codeRoot } from '../../src/config';

export interface LockEntry {
  version?: string;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  optional?: boolean;
  dev?: boolean;
  devOptional?: boolean;
  peer?: boolean;
  [field: string]: unknown;
}

export interface PackageLock {
  name: string;
  lockfileVersion: 3;
  requires: true;
  packages: Record<string, LockEntry>;
}

const readJson = <T>(file: string): T => JSON.parse(fs.readFileSync(file, 'utf8')) as T;

/** The repository's lock entries by location (`node_modules/a/node_modules/b`). */
export function repositoryLock(): Record<string, LockEntry> {
  return readJson<{ packages: Record<string, LockEntry> }>(path.join(codeRoot, 'package-lock.json')).packages;
}

/** Where Node finds `name` from the package at `from` ('' for the project): its own node_modules,
 * then each enclosing one. */
function resolveIn(packages: Record<string, LockEntry>, from: string, name: string): string | undefined {
  for (let at = from; ;) {
    const location = `${at ? `${at}/` : ''}node_modules/${name}`;
    if (packages[location]) return location;
    if (!at) return undefined;
    const up = at.lastIndexOf('/node_modules/');
    at = up < 0 ? '' : at.slice(0, up);
  }
}

/**
 * The project (`dir`, named `name`) that installs `tarball` beside `tools` (name → range, as its
 * package.json says them). Throws naming any dependency neither lock holds.
 */
export function consumerProject(
  dir: string,
  name: string,
  tarball: string,
  tools: Record<string, string>,
): { packageJson: { name: string; private: true; dependencies: Record<string, string> }; lock: PackageLock } {
  const pkg = readJson<{
    name: string;
    version: string;
    license: string;
    dependencies: Record<string, string>;
    peerDependencies: Record<string, string>;
    bin: Record<string, string>;
    engines: Record<string, string>;
  }>(path.join(codeRoot, 'package.json'));
  const pins = readJson<{ packages: Record<string, LockEntry> }>(
    path.join(codeRoot, 'test', 'fixtures', 'consumer-pins.json'),
  ).packages;
  const spec = `file:${path.relative(dir, tarball)}`;
  const dependencies = { [pkg.name]: spec, ...tools };
  const own = `node_modules/${pkg.name}`;
  const available: Record<string, LockEntry> = {
    ...repositoryLock(),
    ...pins,
    [own]: {
      version: pkg.version,
      resolved: spec,
      integrity: `sha512-${crypto.createHash('sha512').update(fs.readFileSync(tarball)).digest('base64')}`,
      license: pkg.license,
      dependencies: pkg.dependencies,
      peerDependencies: pkg.peerDependencies,
      bin: pkg.bin,
      engines: pkg.engines,
    },
  };
  delete available[''];

  // Walked twice: along required edges (what must be installed), then along every edge; what only
  // the second reaches is optional (a platform's prebuilt binary, say), as npm marks it.
  const walk = (withOptional: boolean): Set<string> => {
    const reached = new Set<string>();
    const visit = (from: string, deps: Record<string, string>, optional: boolean, skip: (dep: string) => boolean) => {
      for (const dep of Object.keys(deps)) {
        if (skip(dep)) continue;
        const location = resolveIn(available, from, dep);
        if (location === undefined) {
          if (optional) continue;
          throw new Error(
            `${from || 'the consumer project'} needs ${dep}@${deps[dep]}, which neither package-lock.json nor test/fixtures/consumer-pins.json holds`,
          );
        }
        if (reached.has(location)) continue;
        reached.add(location);
        queue.push(location);
      }
    };
    const queue: string[] = [];
    visit('', dependencies, false, () => false);
    while (queue.length > 0) {
      const from = queue.shift()!;
      const entry = available[from]!;
      visit(from, entry.dependencies ?? {}, false, () => false);
      // npm installs peers; an optional peer only when something else brings it.
      visit(from, entry.peerDependencies ?? {}, false, (dep) => entry.peerDependenciesMeta?.[dep]?.optional === true);
      if (withOptional) visit(from, entry.optionalDependencies ?? {}, true, () => false);
    }
    return reached;
  };
  const required = walk(false);
  const packages: Record<string, LockEntry> = { '': { name, dependencies } };
  for (const location of [...walk(true)].sort()) {
    // The repository's flags say how its own root reaches a package (dev, peer); here it is this project's.
    const { dev: _dev, devOptional: _devOptional, peer: _peer, optional: _optional, ...entry } = available[location]!;
    packages[location] = required.has(location) ? entry : { ...entry, optional: true };
  }
  return {
    packageJson: { name, private: true, dependencies },
    lock: { name, lockfileVersion: 3, requires: true, packages },
  };
}
