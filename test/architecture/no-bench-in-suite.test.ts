// `npm test` runs no benchmark: the files vitest's default config collects (what `npx vitest list` lists)
// import nothing from bench/, and the bench smoke tests are collected by `npm run test:bench` instead.
// Both lists come from vitest's own file globbing, so an include or exclude that drifts is caught.
import { readFile } from 'node:fs/promises';
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

/** An import (static or dynamic) of a module under the repository's bench/ folder. */
const benchImport = /(?:from\s+|import\s*\(\s*)['"](?:\.\.?\/)+bench\//;

describe('the default test run', () => {
  it('collects no test that imports the bench, and the bench config collects the bench smoke tests', async () => {
    const suite = await collected('vitest.config.ts');
    expect(suite.length).toBeGreaterThan(50);
    const importingBench: string[] = [];
    for (const file of suite) {
      if (benchImport.test(await readFile(join(root, file), 'utf8'))) importingBench.push(file);
    }
    expect(importingBench).toEqual([]);

    const benchSuite = await collected('vitest.bench.config.ts');
    expect(benchSuite).toEqual(expect.arrayContaining(['test/bench/ab-smoke.test.ts', 'test/bench/gateway-smoke.test.ts']));
    expect(benchSuite.filter((file) => suite.includes(file))).toEqual([]);
  });
});
