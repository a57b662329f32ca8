// The project's own documents stay usable: every relative link of README.md and docs/*.md, and every
// `docs/<name>.md#anchor` a code comment or config cites, leads to a file and a heading that exist; the
// README stays a short product page that links every document; the code map names files that exist; the
// configuration reference names every key the loader accepts at the top level and under a tenant.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { packageRoot } from '../../src/config/demo.js';
import { validateConfigObject } from '../../src/config/load.js';

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
    .filter((name) => /\.(ts|mjs|js|ya?ml)$/.test(name) && !name.includes('node_modules'))
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
    const configs = ['examples/configs', 'examples/oauth'].flatMap((folder) => readdirSync(join(root, folder)).map((name) => `${folder}/${name}`));
    for (const file of [...['src', 'routes', 'policies', 'bench', 'scripts', 'test', 'deploy'].flatMap(sourceFiles), ...configs, 'Dockerfile', 'docker-compose.yml']) {
      for (const [citation, path, anchor] of read(file).matchAll(/\b(docs\/[\w-]+\.md)(?:#([\w-]+))?/g)) {
        // Tests also hold made-up paths as data; there only the real documents' anchors are checked.
        if (file.startsWith('test/') && !documents.includes(path!)) continue;
        const problem = brokenTarget(path!, anchor);
        if (problem) broken.push(`${file}: ${citation} (${problem})`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('keeps the README a product page of at most 20 KB that links every document in docs/', () => {
    const readme = read('README.md');
    expect(Buffer.byteLength(readme)).toBeLessThanOrEqual(20 * 1024);
    const linked = new Set([...prose(readme).matchAll(/\]\((docs\/[^)#\s]+)/g)].map((match) => match[1]));
    const documents = readdirSync(join(root, 'docs')).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`);
    expect(documents.filter((file) => !linked.has(file))).toEqual([]);
  });

  it('has a code map in docs/architecture.md whose files and folders all exist', () => {
    const architecture = read('docs/architecture.md');
    const map = architecture.slice(architecture.indexOf('## Code map'));
    expect(map.length).toBeGreaterThan(1000);
    const paths = [...map.matchAll(/`((?:src|routes|policies)\/[^`<*]*)`/g)].map((match) => match[1]!.replace(/\/$/, ''));
    expect(paths.length).toBeGreaterThan(40);
    expect(paths.filter((path) => !existsSync(join(root, path)))).toEqual([]);
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
