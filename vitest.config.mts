import { defineConfig } from 'vitest/config';

// Three projects so pure-logic tests never wait for a server:
// - unit: pure functions, contracts, stores on embedded SQLite
// - replay: recorded histories against the current workflow bundle (no server)
// - integration: workflows on a real Temporal dev server started once by test/global-setup.ts
// Both of the latter share one workflow bundle, built once per run (test/workflow-bundle-setup.ts).
export default defineConfig({
  test: {
    reporters: ['default', './test/summary-reporter.ts'],
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          testTimeout: 30_000,
        },
      },
      {
        test: {
          name: 'replay',
          include: ['test/replay/**/*.test.ts'],
          globalSetup: ['test/workflow-bundle-setup.ts'],
          testTimeout: 120_000,
          hookTimeout: 180_000,
        },
      },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          globalSetup: ['test/workflow-bundle-setup.ts', 'test/global-setup.ts'],
          setupFiles: ['test/exit-with-runner.ts'],
          testTimeout: 120_000,
          hookTimeout: 300_000,
          // 2 cores: one worker process per file is plenty, and the dev server needs CPU too.
          fileParallelism: false,
        },
      },
    ],
  },
});
