// `npm run test:bench`: the smoke tests of the bench tooling (`npm run bench`, `npm run bench:ab`). The
// script builds first, so the servers they start run the compiled output of this checkout, never a stale dist/.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/bench/**/*.test.ts'],
    testTimeout: 180_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Each file pins servers and load generators to the two cores: two at once would measure each other.
    fileParallelism: false,
  },
});
