// Floating promises are bugs in workflows (an un-awaited activity or timer silently
// reorders commands), so the type-aware rules below are errors, not warnings.
import tseslint from 'typescript-eslint';

// The built-in pipelines (definitions, stage work, artifacts, their worker configuration).
const NO_BUILT_INS = {
  group: [
    '**/contracts/pipelines',
    '**/contracts/pipelines/*',
    '**/activities/built-in',
    '**/activities/built-in/*',
    '**/activities/ticket-*',
    '**/activities/support-routing',
    '**/activities/support-routing/*',
    '**/activities/research-brief',
    '**/activities/research-brief/*',
    '**/pipelines',
  ],
  allowTypeImports: true,
  message: 'The core never imports the built-in pipelines (they use the public entries, not the other way round).',
};

// The package's public entries (package.json `exports`) by their source files, and the built-in
// pipelines' own folders: the only handrail modules a built-in file may import.
const ENTRY_FILES = [
  'src',
  'src/index',
  'src/client',
  'src/testing',
  'src/replay',
  'src/replay/index',
  'contracts',
  'contracts/index',
  'contracts/rail',
  'workflows/create-rail',
];
const BUILT_IN_DIRS = [
  'contracts/pipelines',
  'activities/ticket-triage',
  'activities/support-routing',
  'activities/ticket-hub',
  'activities/research-brief',
  'activities/built-in',
];
const BUILT_IN_FILES = ['src/pipelines'];

const escapeRegex = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** What a relative import written in `dir` may name after `../` × up: the entries and built-ins
 * reachable from there, as regex fragments for the rest of the path. */
function allowedTails(base) {
  const under = (file) => (base === '' ? file : file.startsWith(`${base}/`) ? file.slice(base.length + 1) : undefined);
  const tails = [];
  for (const file of [...ENTRY_FILES, ...BUILT_IN_FILES])
    if (under(file) !== undefined) tails.push(escapeRegex(under(file)));
  for (const folder of BUILT_IN_DIRS) {
    if (base === folder || base.startsWith(`${folder}/`)) tails.push('.*');
    else if (under(folder) !== undefined) tails.push(`${escapeRegex(under(folder))}(?:/.*)?`);
  }
  return tails;
}

/** A relative import from a file directly in `dir` that resolves to a core module that is no
 * public entry: `./x`, `../x`, `../../x`, …, each level checked against what it reaches. */
function onlyEntriesFrom(dir) {
  const levels = dir.split('/');
  const alternatives = [];
  for (let up = 0; up <= levels.length; up++) {
    const base = levels.slice(0, levels.length - up).join('/');
    const prefix = up === 0 ? '.' : Array(up).fill('..').join('/');
    const tails = allowedTails(base);
    const bareAllowed =
      [...ENTRY_FILES, ...BUILT_IN_FILES].includes(base) ||
      BUILT_IN_DIRS.some((folder) => base === folder || base.startsWith(`${folder}/`));
    const rest = `/(?!\\.\\.(?:/|$))(?!(?:${tails.join('|') || '(?!)'})$)`;
    alternatives.push(`${escapeRegex(prefix)}(?:${rest}${bareAllowed ? '' : '|$'})`);
  }
  return {
    regex: `^(?:${alternatives.join('|')})`,
    allowTypeImports: false,
    message:
      'A built-in pipeline imports handrail only through its public entries (src/index, src/client, src/testing, src/replay, contracts/index, contracts/rail, workflows/create-rail), the built-in folders and packages.',
  };
}

/** One lint block per built-in folder (its files directly in it) and built-in file. */
const builtInsUseEntries = [
  ...BUILT_IN_DIRS.map((dir) => ({ dir, files: [`${dir}/*.ts`] })),
  ...BUILT_IN_FILES.map((file) => ({ dir: file.split('/').slice(0, -1).join('/'), files: [`${file}.ts`] })),
].map(({ dir, files }) => ({
  files,
  rules: { 'no-restricted-imports': ['error', { patterns: [onlyEntriesFrom(dir)] }] },
}));

export default tseslint.config(
  {
    ignores: [
      'node_modules/**',
      'dist/**',
      'templates/**',
      '.tools/**',
      '.data/**',
      'contracts/generated/**',
      'coverage/**',
      'results/**',
    ],
  },
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    // Plain CommonJS helpers that must run before `npm ci` (no TypeScript yet).
    files: ['scripts/**/*.js'],
    languageOptions: {
      sourceType: 'commonjs',
      globals: { require: 'readonly', __dirname: 'readonly', process: 'readonly', console: 'readonly' },
    },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    // The core never imports the built-in pipelines: they are users of the public entries like
    // any other (their definitions, stage work, artifacts and the shipped worker, CLI and demo).
    files: ['contracts/*.ts', 'workflows/**/*.ts', 'activities/*.ts', 'src/**/*.ts'],
    ignores: [
      'workflows/index.ts',
      'src/pipelines.ts',
      'src/worker/main.ts',
      'src/devtools/**',
      'src/operator/cli/**',
      'src/servers/api-main.ts',
      'src/servers/a2a-main.ts',
    ],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [NO_BUILT_INS],
        },
      ],
    },
  },
  {
    // Workflow code runs in Temporal's deterministic sandbox: no Node built-ins, no I/O.
    files: ['workflows/**/*.ts'],
    ignores: ['workflows/index.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['node:*', 'fs', 'path', 'crypto', 'os', 'child_process', 'http', 'https', 'net'],
              message: 'Workflows are sandboxed: do I/O in activities.',
            },
            {
              group: ['../activities/*', '../src/*'],
              allowTypeImports: true,
              message: 'Workflows may only import types from activities/ and src/.',
            },
            NO_BUILT_INS,
          ],
        },
      ],
    },
  },
  {
    // The shipped worker's workflow module: the rail over the built-in pipelines (a user of it).
    files: ['workflows/index.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['node:*', 'fs', 'path', 'crypto', 'os', 'child_process', 'http', 'https', 'net'],
              message: 'Workflows are sandboxed: do I/O in activities.',
            },
          ],
        },
      ],
    },
  },
  // The built-in pipelines are users of the public entries like any other: no deep imports.
  ...builtInsUseEntries,
);
