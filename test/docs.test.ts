// The project's own documents stay usable: every relative link of README.md and docs/*.md, and every
// `docs/<name>.md#anchor` a code comment cites, leads to a file and a heading that exist; the configuration
// reference names every key the loader accepts at the top level and under a tenant.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { packageRoot } from '../src/config/demo.js';
import { validateConfigObject } from '../src/config/load.js';

const root = packageRoot();
const documents = ['README.md', ...readdirSync(join(root, 'docs')).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`)];
const read = (file: string): string => readFileSync(join(root, file), 'utf8');
/** Markdown without its fenced code blocks (a `#` there is a comment, not a heading). */
const prose = (text: string): string => text.replace(/^```[\s\S]*?^```/gm, '');

/** The anchors GitHub gives a document's headings: lower case, punctuation dropped, spaces as hyphens, repeats numbered. */
function anchorsOf(file: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const [, heading] of prose(read(file)).matchAll(/^#{1,6} (.+)$/gm)) {
    const base = heading!.trim().toLowerCase().replace(/[^\p{L}\p{N} _-]/gu, '').replace(/ /g, '-');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

/** Why a link target (relative to the repository) does not lead anywhere, or undefined when it does. */
function brokenTarget(path: string, anchor: string | undefined): string | undefined {
  if (!existsSync(join(root, path))) return 'no such file';
  if (anchor === undefined || !path.endsWith('.md')) return undefined;
  return anchorsOf(path).has(anchor) ? undefined : `no heading with anchor #${anchor}`;
}

function sourceFiles(folder: string): string[] {
  if (!existsSync(join(root, folder))) return [];
  return readdirSync(join(root, folder), { recursive: true, encoding: 'utf8' })
    .filter((name) => /\.(ts|mjs|js)$/.test(name) && !name.includes('node_modules'))
    .map((name) => `${folder}/${name}`);
}

describe('the documentation', () => {
  it('links only to files and headings that exist', () => {
    expect(documents).toEqual(expect.arrayContaining(['docs/architecture.md', 'docs/security-model.md', 'docs/configuration.md']));
    const broken: string[] = [];
    for (const file of documents) {
      for (const [, target] of prose(read(file)).matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/i.test(target!)) continue;
        const [path, anchor] = target!.split('#') as [string, string | undefined];
        const resolved = path === '' ? file : relative(root, resolve(root, dirname(file), path));
        const problem = brokenTarget(resolved, anchor);
        if (problem) broken.push(`${file}: ${target} (${problem})`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('has every section a code comment cites', () => {
    const broken: string[] = [];
    for (const file of ['src', 'routes', 'policies', 'bench', 'scripts', 'test'].flatMap(sourceFiles)) {
      for (const [citation, path, anchor] of read(file).matchAll(/\b(docs\/(?:architecture|security-model|configuration)\.md)(?:#([\w-]+))?/g)) {
        const problem = brokenTarget(path!, anchor);
        if (problem) broken.push(`${file}: ${citation} (${problem})`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('names every configuration key, top-level and per tenant, in the configuration reference', () => {
    const reference = read('docs/configuration.md');
    const config = validateConfigObject({ tenants: { t: { deferThreshold: 1 } } }, root, undefined);
    // Set by the loader, not read from the file.
    const derived = new Set(['baseDir', 'source']);
    const topLevel = Object.keys(config).filter((key) => !derived.has(key));
    expect(topLevel.filter((key) => !reference.includes(`| [\`${key}\`](#`))).toEqual([]);
    const tenantKeys = Object.keys(config.tenants.t!);
    expect(tenantKeys.length).toBeGreaterThan(10);
    expect(tenantKeys.filter((key) => !new RegExp(`^\\| \`${key}[.\`]`, 'm').test(reference))).toEqual([]);
  });
});
