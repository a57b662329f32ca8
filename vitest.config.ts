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
  },
});
