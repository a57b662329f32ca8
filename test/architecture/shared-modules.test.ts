// The suite runs with `isolate: false` (vitest.config.ts): a worker's modules outlive each test file, so a
// module mock or a stubbed global in one file would leak into every later file of that worker. None may
// exist; a test that needs a different module behaviour injects it (every part takes its dependencies).
import { readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { createVitest } from 'vitest/node';
import { describe, expect, it } from 'vitest';
import { packageRoot } from '../../src/config/demo.js';

const root = packageRoot();
const leaksAcrossFiles = /\bvi\.(?:mock|doMock|hoisted|stubGlobal|stubEnv|useFakeTimers)\s*\(/;

describe('the default test run shares modules between test files', () => {
  it('holds no module mock, stubbed global or fake timer that would outlive its file', async () => {
    const vitest = await createVitest('test', { root, config: join(root, 'vitest.config.ts'), watch: false });
    let files: string[];
    try {
      expect(vitest.projects.map((project) => [project.name, project.config.isolate])).toEqual([['suite', false], ['under-attack', false]]);
      files = (await vitest.globTestSpecifications()).map((specification) => specification.moduleId);
    } finally {
      await vitest.close();
    }
    expect(files.length).toBeGreaterThan(50);
    const offending: string[] = [];
    for (const file of files) {
      if (leaksAcrossFiles.test(await readFile(file, 'utf8'))) offending.push(relative(root, file));
    }
    expect(offending).toEqual([]);
  });
});
