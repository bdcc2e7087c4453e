import { availableParallelism } from 'node:os';
import { configDefaults, defineConfig } from 'vitest/config';

/**
 * The test tiers (CONTRIBUTING.md): `offline` is `npm test`, what a contributor runs, needing only
 * ../shared and the npm dependencies; `stress` needs the same but minutes of load, soak and fault
 * injection (heap-limited servers, a 2,000-call session, bursts, fuzzing, builds killed at random),
 * best on a quiet machine; `network` needs the npm registry, PyPI and Maven Central (clients no one
 * here wrote, the package's own install, the real models); `engine` starts a three-node OpenSearch
 * cluster (three JVMs) and runs alone, after everything else. `.ci/run` runs all four.
 */
const ENGINE_TESTS = ['test/e2e/engine-backend.test.ts'];

const STRESS_TESTS = [
  'test/e2e/mixed-load.test.ts',
  'test/e2e/answer-memory.test.ts',
  'test/e2e/mcp-long-session.test.ts',
  'test/e2e/stdio-limits.test.ts',
  'test/e2e/fuzz.test.ts',
  'test/e2e/fuzz-raw.test.ts',
  'test/e2e/kill-resume.test.ts',
];

const NETWORK_TESTS = [
  'test/e2e/package-install.test.ts',
  'test/e2e/fastmcp-client.test.ts',
  'test/e2e/inspector-cli.test.ts',
  'test/e2e/conformance.test.ts',
  'test/e2e/registry-metadata.test.ts',
  'test/e2e/page.test.ts',
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
    maxWorkers: process.env['CI'] ? 3 : Math.max(3, availableParallelism() + 1),
    projects: [
      {
        extends: true,
        test: {
          name: 'offline',
          include: ['test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, ...ENGINE_TESTS, ...NETWORK_TESTS, ...STRESS_TESTS],
          sequence: { groupOrder: 0 },
        },
      },
      { extends: true, test: { name: 'stress', include: STRESS_TESTS, sequence: { groupOrder: 0 } } },
      { extends: true, test: { name: 'network', include: NETWORK_TESTS, sequence: { groupOrder: 0 } } },
      // the cluster's JVMs would slow the timing-sensitive tests beside them
      { extends: true, test: { name: 'engine', include: ENGINE_TESTS, sequence: { groupOrder: 1 } } },
    ],
  },
});
