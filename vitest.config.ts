import { availableParallelism } from 'node:os';
import { configDefaults, defineConfig } from 'vitest/config';

/** Starts a three-node OpenSearch cluster (three JVMs): it runs alone, after everything else. */
const ENGINE_TESTS = ['test/e2e/engine-backend.test.ts'];

/**
 * Tests that need the network (the npm registry, PyPI) or install something on first use: the
 * `slow` tier with the engine (CONTRIBUTING.md). Everything else is the `main` project, `npm run
 * test:fast`, which needs only ../shared.
 */
const NETWORK_TESTS = [
  'test/e2e/package-install.test.ts',
  'test/e2e/fastmcp-client.test.ts',
  'test/e2e/inspector-cli.test.ts',
  'test/e2e/conformance.test.ts',
  'test/acceptance/real-model.test.ts',
  'test/acceptance/real-numerics.test.ts',
];

export default defineConfig({
  test: {
    environment: 'node',
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // e2e tests spawn servers and builds: one worker per core, two in CI (its machine has two)
    pool: 'forks',
    maxWorkers: process.env['CI'] ? 2 : Math.max(2, availableParallelism()),
    projects: [
      {
        extends: true,
        test: {
          name: 'main',
          include: ['test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, ...ENGINE_TESTS, ...NETWORK_TESTS],
          sequence: { groupOrder: 0 },
        },
      },
      { extends: true, test: { name: 'slow', include: NETWORK_TESTS, sequence: { groupOrder: 0 } } },
      // the cluster's JVMs would slow the timing-sensitive tests beside them
      { extends: true, test: { name: 'engine', include: ENGINE_TESTS, sequence: { groupOrder: 1 } } },
    ],
  },
});
