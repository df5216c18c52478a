/**
 * Summarises V8 `.cpuprofile` files (from `HANDRAIL_BENCH_CPU_PROF=<dir> npx tsx bench/run.ts` or
 * `node --cpu-prof`): self time by group (Temporal SDK, zod, ajv, generated validators, contracts,
 * workflows, node:vm, GC …) and the top functions. Code of a workflow bundle runs as one script
 * (`evalmachine.<anonymous>`); with `--bundle <file.js>` its lines are mapped back to the webpack
 * module they came from. Also the inclusive time spent evaluating bundle modules
 * (`__webpack_require__`), which a workflow run pays again for each module it loads.
 *
 * `npx tsx bench/profile-summary.ts [--bundle file.js] [--top 15] <file.cpuprofile | dir> …`
 */
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const { values: args, positionals } = parseArgs({
  options: { bundle: { type: 'string', multiple: true }, top: { type: 'string', default: '15' } },
  allowPositionals: true,
});

/** The webpack module each line of a bundle belongs to (`/***\/ "./contracts/validate.ts":`), under
 * the file name the SDK runs it as (`workflow-bundle-<hash>.js`, from its inline source map). */
function bundleModules(file: string): [string, { line: number; module: string }[]] {
  const lines = fs.readFileSync(file, 'utf8').split('\n');
  const starts: { line: number; module: string }[] = [];
  let name = '';
  lines.forEach((text, line) => {
    const m = /^\/\*\*\*\/ "([^"]+)"/.exec(text);
    if (m) starts.push({ line, module: m[1]!.replace(/^(\.\.\/)+[^/]+\/node_modules\//, 'node_modules/') });
    else if (text.startsWith('/******/ \t});')) starts.push({ line, module: '(webpack runtime)' });
    const map = /^\/\/# sourceMappingURL=data:application\/json;charset=utf-8;base64,(.*)$/.exec(text);
    if (map) name = (JSON.parse(Buffer.from(map[1]!, 'base64').toString('utf8')) as { file: string }).file;
  });
  return [name, starts];
}
const bundles = new Map((args.bundle ?? []).map(bundleModules));

/** Where a frame's code lives: a file, or the bundle module it came from. */
function source(frame: CallFrame): string {
  const starts = bundles.get(path.basename(frame.url));
  if (starts) {
    let found = '';
    for (const s of starts) {
      if (s.line > frame.lineNumber) break;
      found = s.module;
    }
    return found ? `bundle:${found}` : 'bundle:(runtime)';
  }
  return frame.url.replace(/^file:\/\//, '');
}

function group(frame: CallFrame): string {
  const name = frame.functionName;
  if (name === '(garbage collector)') return 'GC';
  if (name === '(idle)' || name === '(program)' || name === '(root)') return name;
  const src = source(frame);
  if (src.includes('@temporalio/')) return `temporal ${/@temporalio\/([^/]+)/.exec(src)![1]}`;
  if (src.includes('/zod/')) return 'zod';
  if (src.includes('/ajv')) return 'ajv';
  if (src.includes('contracts/generated/')) return 'generated validators';
  if (src === 'node:vm' || name === 'runInContext' || name === 'createContext') return 'node:vm';
  if (src.startsWith('node:')) return 'node internals';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(src);
  if (pkg) return pkg[1]!;
  for (const dir of ['contracts', 'workflows', 'activities', 'src', 'bench']) if (src.includes(`${dir}/`)) return dir;
  if (src.startsWith('bundle:') || src.includes('workflow-bundle-')) return 'workflow bundle, other';
  if (src.startsWith('evalmachine')) return 'SDK vm scripts';
  return src || '(native)';
}

function summarise(file: string, top: number): string {
  const profile = JSON.parse(fs.readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const self = new Map<number, number>();
  profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0) / 1000));

  let total = 0;
  let busy = 0;
  let moduleEval = 0;
  const groups = new Map<string, number>();
  const functions = new Map<string, number>();
  for (const [id, ms] of self) {
    const frame = byId.get(id)!.callFrame;
    total += ms;
    if (frame.functionName !== '(idle)') busy += ms;
    const g = group(frame);
    groups.set(g, (groups.get(g) ?? 0) + ms);
    const key = `${frame.functionName || '(anonymous)'}  ${source(frame)}:${frame.lineNumber + 1}  [${g}]`;
    functions.set(key, (functions.get(key) ?? 0) + ms);
    // Inside a bundle module's evaluation: some ancestor is webpack's require.
    for (let up = parent.get(id); up !== undefined; up = parent.get(up)) {
      if (byId.get(up)!.callFrame.functionName === '__webpack_require__') {
        moduleEval += ms;
        break;
      }
    }
  }
  const pct = (ms: number) => `${((100 * ms) / busy).toFixed(1)}%`;
  const rows = (m: Map<string, number>, n: number) =>
    [...m]
      .filter(([k]) => !k.startsWith('(idle)'))
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([k, ms]) => `| ${ms.toFixed(0)} | ${pct(ms)} | ${k.replace(/\|/g, '\\|')} |`);
  return [
    `### ${path.basename(file)}: ${busy.toFixed(0)} ms busy of ${total.toFixed(0)} ms; bundle module evaluation ${moduleEval.toFixed(0)} ms (${pct(moduleEval)})`,
    '',
    '| self ms | of busy | group |',
    '| --- | --- | --- |',
    ...rows(groups, 12),
    '',
    '| self ms | of busy | function  source:line  [group] |',
    '| --- | --- | --- |',
    ...rows(functions, top),
    '',
  ].join('\n');
}

const files = positionals.flatMap((p) =>
  fs.statSync(p).isDirectory()
    ? fs
        .readdirSync(p)
        .filter((f) => f.endsWith('.cpuprofile'))
        .sort()
        .map((f) => path.join(p, f))
    : [p],
);
for (const file of files) console.log(summarise(file, Number(args.top)));
