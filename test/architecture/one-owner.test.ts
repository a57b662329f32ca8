// One owner per rule (issue 44): every operator glob goes through the one linear-time engine
// (src/patterns/name-globs.ts → src/patterns/glob.ts), so picomatch's backtracking matcher has no place in the
// gateway's own code. picomatch stays a dependency: operators' function modules may import it.
import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { packageRoot } from '../../src/config/demo.js';

const root = packageRoot();
const importsPicomatch = /(?:\bfrom\s*|\bimport\s*\(\s*|\brequire\s*\(\s*|^\s*import\s+)['"]picomatch(?:\/[^'"]*)?['"]/m;

async function sourcesUnder(folder: string): Promise<string[]> {
  const entries = await readdir(join(root, folder), { recursive: true, withFileTypes: true });
  return entries.filter((entry) => entry.isFile() && /\.[cm]?tsx?$/.test(entry.name)).map((entry) => join(entry.parentPath, entry.name));
}

describe('one glob engine', () => {
  it('recognises every way of importing picomatch', () => {
    for (const text of ["import picomatch from 'picomatch';", 'import { isMatch } from "picomatch";', "const pm = await import('picomatch');", "import 'picomatch/posix';", "const pm = require('picomatch')"]) {
      expect(importsPicomatch.test(text), text).toBe(true);
    }
    expect(importsPicomatch.test("// picomatch compiles a glob to a backtracking regex\nimport { compileGlob } from './glob.js';")).toBe(false);
  });

  it('src/, policies/ and routes/ import no picomatch', async () => {
    const files = (await Promise.all(['src', 'policies', 'routes'].map(sourcesUnder))).flat();
    expect(files.length).toBeGreaterThan(100);
    const offending: string[] = [];
    for (const file of files) if (importsPicomatch.test(await readFile(file, 'utf8'))) offending.push(relative(root, file));
    expect(offending).toEqual([]);
  });
});
