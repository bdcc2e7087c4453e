import { configDefaults, defineConfig } from 'vitest/config';

/** Starts a three-node OpenSearch cluster (three JVMs): it runs alone, after everything else. */
const ENGINE_TESTS = ['test/e2e/engine-backend.test.ts'];

export default defineConfig({
  test: {
    environment: 'node',
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // e2e tests spawn servers and builds; two workers match the 2-core CI machine
    pool: 'forks',
    maxWorkers: 2,
    projects: [
      {
        extends: true,
        test: {
          name: 'main',
          include: ['test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, ...ENGINE_TESTS],
          sequence: { groupOrder: 0 },
        },
      },
      // the cluster's JVMs would slow the timing-sensitive tests beside them
      { extends: true, test: { name: 'engine', include: ENGINE_TESTS, sequence: { groupOrder: 1 } } },
    ],
  },
});
