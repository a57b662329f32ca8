// `npm test` runs no benchmark: the files vitest's default config collects (what `npx vitest list` lists)
// import nothing from bench/, and the bench smoke tests are collected by `npm run test:bench` instead.
// The imports are checked by the `no-bench-in-suite` rule of .dependency-cruiser.cjs (test/, outside
// test/bench/; run by test/architecture/import-cycles.test.ts); this test keeps that rule's scope equal to
// what vitest's own file globbing collects, so an include or exclude that drifts is caught.
import { join, relative } from 'node:path';
import { createVitest } from 'vitest/node';
import { describe, expect, it } from 'vitest';
import { packageRoot } from '../../src/config/demo.js';

const root = packageRoot();

/** The test files a config collects, relative to the repository, as `vitest list --filesOnly` finds them. */
async function collected(config: string): Promise<string[]> {
  const vitest = await createVitest('test', { root, config: join(root, config), watch: false });
  try {
    const specifications = await vitest.globTestSpecifications();
    return specifications.map((specification) => relative(root, specification.moduleId)).sort();
  } finally {
    await vitest.close();
  }
}

describe('the default test run', () => {
  it('collects only tests the no-bench-in-suite import rule covers, and the bench config collects the bench smoke tests', async () => {
    const suite = await collected('vitest.config.ts');
    expect(suite.length).toBeGreaterThan(50);
    expect(suite.filter((file) => !file.startsWith('test/') || file.startsWith('test/bench/'))).toEqual([]);

    const benchSuite = await collected('vitest.bench.config.ts');
    expect(benchSuite).toEqual(expect.arrayContaining(['test/bench/ab-smoke.test.ts', 'test/bench/gateway-smoke.test.ts']));
    expect(benchSuite.filter((file) => suite.includes(file))).toEqual([]);
  });
});
