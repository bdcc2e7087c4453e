import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    environment: 'node',
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // e2e tests spawn servers and builds; two workers match the 2-core CI machine
    pool: 'forks',
    maxWorkers: 2,
  },
});
