// A clean `npm ci` is quiet on every supported Node (docs/development.md#a-quiet-install): the packages that
// declare a Node 20 build unsupported are exactly the reviewed ones whose warnings .npmrc keeps out of the
// output, and no dependency's install script is left unreviewed.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { packageRoot } from '../src/config/demo.js';

const root = packageRoot();
const read = (file: string) => readFileSync(join(root, file), 'utf8');

/** Reviewed: they declare Node >= 22 and run on Node 20 (CI runs the suite on Node 20 and 24). */
const REVIEWED_ENGINE_MISMATCHES = [
  '@google/genai',
  '@kubernetes-models/apimachinery',
  '@kubernetes-models/base',
  '@kubernetes-models/validate',
  'amaro',
  'content-disposition',
  'cookie',
  'kubernetes-models',
  'openai',
];

interface LockPackage {
  engines?: { node?: string } | string[];
  hasInstallScript?: boolean;
  dev?: boolean;
}

/** Whether an `engines.node` range leaves out Node 20 (only the `>=N` forms this lockfile holds; anything else is flagged too). */
function excludesNode20(range: string): boolean {
  if (/^\s*(\*|)\s*$/.test(range)) return false;
  return range.split('||').every((part) => {
    const floor = /^\s*>=?\s*v?(\d+)(?:\.\d+){0,2}\s*$/.exec(part);
    if (floor) return Number(floor[1]) > 20;
    const caret = /^\s*\^(\d+)/.exec(part);
    if (caret) return Number(caret[1]) !== 20;
    return !/\b20\b/.test(part) && !/>=?\s*v?1\d\b/.test(part);
  });
}

describe('a quiet npm ci', () => {
  const lock = JSON.parse(read('package-lock.json')) as { packages: Record<string, LockPackage> };
  const name = (path: string) => path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length);

  it('has exactly the reviewed packages declaring Node 20 unsupported, and .npmrc and the docs name each', () => {
    const mismatched = Object.entries(lock.packages)
      .filter(([path, entry]) => path !== '' && !Array.isArray(entry.engines) && entry.engines?.node !== undefined && excludesNode20(entry.engines.node))
      .map(([path]) => name(path));
    expect([...new Set(mismatched)].sort()).toEqual(REVIEWED_ENGINE_MISMATCHES);
    expect(read('.npmrc')).toMatch(/^loglevel=error$/m);
    const docs = read('docs/development.md');
    for (const pkg of REVIEWED_ENGINE_MISMATCHES) expect(docs, pkg).toContain(`\`${pkg}\``);
  });

  it('reads the engines ranges it checks', () => {
    expect(['>=22', '>=22.0.0', '^22 || ^24'].map(excludesNode20)).toEqual([true, true, true]);
    expect(['>=20.18', '>=18', '^20 || >=22', '>= 14', '*'].map(excludesNode20)).toEqual([false, false, false, false, false]);
  });

  it('leaves no install script unreviewed: every package with one is allowed or denied in allowScripts', () => {
    const { allowScripts = {} } = JSON.parse(read('package.json')) as { allowScripts?: Record<string, boolean> };
    const withScripts = Object.entries(lock.packages).filter(([path, entry]) => path !== '' && entry.hasInstallScript).map(([path]) => name(path));
    expect(withScripts.length).toBeGreaterThan(0);
    const covered = (pkg: string) => Object.keys(allowScripts).some((key) => key === pkg || key.startsWith(`${pkg}@`));
    expect(withScripts.filter((pkg) => !covered(pkg))).toEqual([]);
  });
});
