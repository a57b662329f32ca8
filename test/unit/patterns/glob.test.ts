import { describe, expect, it } from 'vitest';
import { compileGlob, type GlobMatcher } from '../../../src/patterns/glob.js';

const matcher = (glob: string): GlobMatcher => {
  const result = compileGlob(glob);
  if (typeof result !== 'function') throw new Error(`refused: ${result.reason}`);
  return result;
};

describe('globs on the linear-time engine', () => {
  it.each([
    ['*.ts', ['a.ts', '.ts'], ['src/a.ts', 'a.tsx']],
    ['src/**/*.ts', ['src/a.ts', 'src/x/y/a.ts', 'src/.a.ts'], ['lib/a.ts', 'src/a.js']],
    ['**', ['a', 'a/b/c', '.git/x'], []],
    ['src/**', ['src', 'src/a', 'src/a/b'], ['srcx', 'lib/src']],
    ['a/**/b', ['a/b', 'a/x/b', 'a/x/y/b'], ['ab', 'a/xb']],
    ['**/node_modules/**', ['node_modules', 'node_modules/a', 'x/node_modules/a/b'], ['x/node_modulesx/a']],
    ['**/*.{ts,tsx}', ['a.ts', 'x/a.tsx'], ['x/a.js']],
    ['?.md', ['a.md'], ['ab.md', '/.md']],
    ['[a-c]*.txt', ['a1.txt', 'b.txt'], ['d1.txt']],
    ['[!a-c]*.txt', ['d1.txt'], ['a1.txt', '/x.txt']],
    ['[[:digit:]]*', ['1a'], ['a1']],
    ['!*.ts', ['a.js', 'src/a.ts'], ['a.ts']],
    ['+(a|b).c', ['a.c', 'abab.c'], ['c.c', '.c']],
    ['@(x|y)/*', ['x/1', 'y/2'], ['z/1', 'x/1/2']],
    ['file\\*.txt', ['file*.txt'], ['fileX.txt']],
    ['a b (1).txt', ['a b (1).txt'], ['a b 1.txt']],
    ['é*.txt', ['éa.txt'], ['ea.txt']],
    ['{a,b', ['{a,b'], ['a']],
  ])('%s', (glob, matching, notMatching) => {
    const match = matcher(glob);
    for (const path of matching) expect(match(path), path).toBe(true);
    for (const path of notMatching) expect(match(path), path).toBe(false);
  });

  it('matches the globs that backtrack for picomatch in linear time', () => {
    const started = performance.now();
    for (const glob of ['*a*a*a*a*a*ab', '*a*a*a*a*a*a*a*ab']) expect(matcher(glob)('a'.repeat(250))).toBe(false);
    expect(performance.now() - started).toBeLessThan(1000); // a generous bound: picomatch took 8.9 s and >110 s
  });

  it('refuses a negated extglob (it needs look-ahead), saying why', () => {
    expect(compileGlob('!(*.ts)')).toEqual({ ok: false, reason: expect.stringMatching(/^"!\(\.\.\.\)" \(a negated extglob\) needs look-ahead/) });
    expect(compileGlob('src/+(a|b')).toEqual({ ok: false, reason: 'unclosed "+(" in the glob' });
  });
});
