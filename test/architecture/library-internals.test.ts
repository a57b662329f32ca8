// The core uses its libraries through their public APIs only: no pino symbols, no private (`_`-prefixed)
// members of the MCP SDK or any other library, no `collect` patched onto a prom-client metric after the
// fact, and at most four `as unknown as` casts (each where a value crosses into a type it cannot be
// checked against: a loaded module, a parsed document, an auth decorator, prom-client's metric type).
import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { packageRoot } from '../../src/config/demo.js';

const root = packageRoot();
const MAX_DOUBLE_CASTS = 4;

async function sources(): Promise<Array<{ file: string; text: string }>> {
  const files: Array<{ file: string; text: string }> = [];
  for (const folder of ['src', 'routes', 'policies']) {
    for (const entry of await readdir(join(root, folder), { recursive: true })) {
      if (!entry.endsWith('.ts')) continue;
      const path = join(root, folder, entry);
      files.push({ file: relative(root, path), text: await readFile(path, 'utf8') });
    }
  }
  return files;
}

/** Code with its comments blanked, so prose about a private field is not mistaken for a read of one. */
const withoutComments = (text: string): string => text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1');

// `_meta` is the MCP protocol's own public field; anything else after `._` or in `['_…']` is private.
const privateMember = /[\w$)\]]\._(?!meta\b)[A-Za-z]\w*|\[\s*['"]_(?!meta['"])[A-Za-z]\w*['"]\s*\]/;
const pinoInternals = /pino\.symbols|\bsymbols\b[^;]*from\s+['"]pino['"]|Symbol\.for\(\s*['"]pino/;
const patchedCollect = /\.collect\s*=(?!=)/;

describe('library use in src/, routes/ and policies/', () => {
  it('reads no pino symbols, no private library members, and patches no prom-client collect', async () => {
    const offending = (await sources()).flatMap(({ file, text }) => {
      const code = withoutComments(text);
      return [privateMember, pinoInternals, patchedCollect].filter((pattern) => pattern.test(code)).map((pattern) => `${file}: ${pattern.exec(code)?.[0]}`);
    });
    expect(offending).toEqual([]);
  });

  it(`holds at most ${MAX_DOUBLE_CASTS} \`as unknown as\` casts`, async () => {
    const casts = (await sources()).flatMap(({ file, text }) => (withoutComments(text).match(/\bas unknown as\b/g) ?? []).map(() => file));
    expect(casts.length, casts.join(', ')).toBeLessThanOrEqual(MAX_DOUBLE_CASTS);
  });
});
