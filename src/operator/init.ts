/**
 * `handrail init <dir>`: a runnable pipeline project from the template the package ships
 * (`templates/init/`): a pipeline, its stage activities, the workflow module, the plugin, a worker,
 * a client script and a test that runs a job on a dev server of its own. The files are copied as
 * they are; only package.json is edited (as JSON): the project's name, and the handrail it
 * depends on — the same one this command runs from, so a project made from a packed tarball
 * installs that tarball again.
 */
import fs from 'node:fs';
import path from 'node:path';
import { packageRoot } from '../package-paths';

export const TEMPLATE_DIR = path.join(packageRoot, 'templates', 'init');

export class InitError extends Error {
  override readonly name = 'InitError';
}

export interface InitResult {
  dir: string;
  files: string[];
  /** How the new project depends on handrail (`^0.1.0`, or `file:…` for a tarball). */
  handrail: string;
}

/** Every file of the template, relative to it (the template's own build output excluded). */
function templateFiles(dir: string, from = ''): string[] {
  return fs.readdirSync(path.join(dir, from), { withFileTypes: true }).flatMap((entry) => {
    const rel = path.join(from, entry.name);
    if (['node_modules', 'dist'].includes(entry.name)) return [];
    return entry.isDirectory() ? templateFiles(dir, rel) : [rel];
  });
}

/** The project that installed this copy of handrail, when it runs from `<project>/node_modules/handrail`. */
function installingProject(root: string): string | undefined {
  const parent = path.dirname(root);
  if (path.basename(parent) === 'node_modules') return path.dirname(parent);
  if (path.basename(path.dirname(parent)) === 'node_modules' && path.basename(parent).startsWith('@'))
    return path.dirname(path.dirname(parent));
  return undefined;
}

/** The dependency spec for handrail in a project at `dir`: the installing project's own, when it
 * came from a file or tarball (re-based to `dir`), else this version from the registry. */
export function handrailSpec(dir: string, root: string = packageRoot): string {
  const own = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { version: string };
  const project = installingProject(root);
  if (project && fs.existsSync(path.join(project, 'package.json'))) {
    const pkg = JSON.parse(fs.readFileSync(path.join(project, 'package.json'), 'utf8')) as Record<
      string,
      Record<string, string> | undefined
    >;
    const spec = pkg.dependencies?.handrail ?? pkg.devDependencies?.handrail;
    if (spec?.startsWith('file:')) {
      const target = path.resolve(project, spec.slice('file:'.length));
      return `file:${path.relative(dir, target).split(path.sep).join('/')}`;
    }
  }
  return `^${own.version}`;
}

const NAME = /^(?:@[a-z0-9-~][a-z0-9-._~]*\/)?[a-z0-9-~][a-z0-9-._~]*$/;

/** Writes the project into `dir` (created; refused when it exists and is not empty). */
export function initProject(target: string, opts: { handrail?: string } = {}): InitResult {
  const dir = path.resolve(target);
  if (fs.existsSync(dir) && (!fs.statSync(dir).isDirectory() || fs.readdirSync(dir).length > 0)) {
    throw new InitError(`${target} already exists and is not an empty folder; give a new one`);
  }
  const name = path.basename(dir).toLowerCase();
  if (!NAME.test(name))
    throw new InitError(`"${path.basename(dir)}" is not a valid npm package name; pick a folder name like my-pipeline`);
  const files = templateFiles(TEMPLATE_DIR);
  fs.mkdirSync(dir, { recursive: true });
  for (const file of files) {
    // npm never packs a file named .gitignore: the template keeps it as `gitignore`.
    const dest = path.join(dir, file === 'gitignore' ? '.gitignore' : file);
    fs.mkdirSync(path.dirname(dest), { recursive: true });
    fs.copyFileSync(path.join(TEMPLATE_DIR, file), dest);
  }
  const handrail = opts.handrail ?? handrailSpec(dir);
  const pkgFile = path.join(dir, 'package.json');
  const pkg = JSON.parse(fs.readFileSync(pkgFile, 'utf8')) as { name: string; dependencies: Record<string, string> };
  pkg.name = name;
  pkg.dependencies.handrail = handrail;
  fs.writeFileSync(pkgFile, `${JSON.stringify(pkg, null, 2)}\n`);
  return { dir, files: files.map((f) => (f === 'gitignore' ? '.gitignore' : f)), handrail };
}
