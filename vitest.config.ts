import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 600_000,
    pool: 'forks',
    // e2e suites share one control plane per file; keep files from fighting over 2 cores.
    fileParallelism: true,
    maxWorkers: 2,
  },
});
