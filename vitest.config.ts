import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The bench smoke tests drive load for about half of a full run and assert nothing about the product:
    // they run in `npm run test:bench` (vitest.bench.config.ts), never in `npm test`.
    exclude: [...configDefaults.exclude, 'test/bench/**'],
    // Finds or starts the Redis the Redis tests share (a throwaway redis-server when installed), or says why they skip.
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Integration tests spawn MCP servers and listen on ports; two workers match this 2-core machine.
    maxWorkers: 2,
    // A worker keeps its modules from one test file to the next: re-importing Fastify, the MCP SDK and the
    // app for each of ~140 files was more than half of a run. Tests therefore leave no module state behind:
    // no module mocks (test/architecture/shared-modules.test.ts), environment and globals restored, apps
    // and tracing shut down in their own hooks.
    isolate: false,
  },
});
