// Floating promises are bugs in workflows (an un-awaited activity or timer silently
// reorders commands), so the type-aware rules below are errors, not warnings.
import tseslint from 'typescript-eslint';

// The built-in pipelines (definitions, stage work, artifacts, their worker configuration).
const NO_BUILT_INS = {
  group: ['**/contracts/pipelines', '**/contracts/pipelines/*', '**/activities/built-in', '**/activities/built-in/*', '**/activities/ticket-*', '**/activities/support-routing', '**/activities/support-routing/*', '**/pipelines'],
  allowTypeImports: true,
  message: 'The core never imports the built-in pipelines (they use the public entries, not the other way round).',
};

export default tseslint.config(
  { ignores: ['node_modules/**', 'dist/**', 'templates/**', '.tools/**', '.data/**', 'contracts/generated/**', 'coverage/**', 'results/**'] },
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
    languageOptions: { sourceType: 'commonjs', globals: { require: 'readonly', __dirname: 'readonly', process: 'readonly', console: 'readonly' } },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    // The core never imports the built-in pipelines: they are users of the public entries like
    // any other (their definitions, stage work, artifacts and the shipped worker, CLI and demo).
    files: ['contracts/*.ts', 'workflows/**/*.ts', 'activities/*.ts', 'src/**/*.ts'],
    ignores: ['workflows/index.ts', 'src/pipelines.ts', 'src/worker/main.ts', 'src/devtools/**', 'src/operator/cli/**', 'src/servers/api-main.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [
          NO_BUILT_INS,
        ],
      }],
    },
  },
  {
    // Workflow code runs in Temporal's deterministic sandbox: no Node built-ins, no I/O.
    files: ['workflows/**/*.ts'],
    ignores: ['workflows/index.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [
          { group: ['node:*', 'fs', 'path', 'crypto', 'os', 'child_process', 'http', 'https', 'net'], message: 'Workflows are sandboxed: do I/O in activities.' },
          { group: ['../activities/*', '../src/*'], allowTypeImports: true, message: 'Workflows may only import types from activities/ and src/.' },
          NO_BUILT_INS,
        ],
      }],
    },
  },
  {
    // The shipped worker's workflow module: the rail over the built-in pipelines (a user of it).
    files: ['workflows/index.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: ['node:*', 'fs', 'path', 'crypto', 'os', 'child_process', 'http', 'https', 'net'], message: 'Workflows are sandboxed: do I/O in activities.' }] }],
    },
  },
);
