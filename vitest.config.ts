import { defineConfig } from 'vitest/config';
import { isolateThisRun } from './test/support/isolation.ts';

// Every process of a test run, workers and the kube-apiservers they start included, lives in a network namespace
// of its own that holds only lo (issue 21): vitest's main process re-executes itself under `unshare --net` here,
// before any worker starts, and the re-executed one checks that nothing is routable (test/support/isolation.ts).
await isolateThisRun('vitest');

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
