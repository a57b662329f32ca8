// The composition root registers plugins, then routes (fastify/demo's model): services reach each other
// through declared `dependencies`, never through a `let` stand-in swapped in once something later exists.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { packageRoot } from '../../src/config/demo.js';

/** `let`/`var` declarations, outside comments and strings. */
function reassignable(source: string): string[] {
  const code = source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/.*$/gm, '').replace(/(['"`])(?:\\.|(?!\1)[^\\])*\1/g, '""');
  return [...code.matchAll(/\b(?:let|var)\s+[A-Za-z_$][\w$]*/g)].map((match) => match[0]);
}

describe('src/app.ts', () => {
  it('finds a let or var, and ignores one in a comment or a string', () => {
    expect(reassignable('let liveConfig = () => config;\nconst a = 1;')).toEqual(['let liveConfig']);
    expect(reassignable("// let x = 1\nconst s = 'let y';\n/* var z */")).toEqual([]);
  });

  it('declares nothing it reassigns later', async () => {
    expect(reassignable(await readFile(join(packageRoot(), 'src/app.ts'), 'utf8'))).toEqual([]);
  });
});
