// The reference parts of docs/: the error table of docs/api.md and the whole-file configuration of
// docs/configuration.md must match the code and the repository.
import { readdir, readFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { packageRoot } from '../../src/config/demo.js';
import { errors } from '../../src/errors.js';

const root = packageRoot();
let api: string;
let configuration: string;

beforeAll(async () => {
  api = await readFile(join(root, 'docs/api.md'), 'utf8');
  configuration = await readFile(join(root, 'docs/configuration.md'), 'utf8');
});

/** The rows `| <status> | \`TG_…\` | … |` of the error table of docs/api.md. */
function errorTable(text: string): Map<string, number> {
  const rows = new Map<string, number>();
  for (const match of text.matchAll(/^\| (\d{3}) \| `(TG_[A-Z_]+)` \|/gm)) rows.set(match[2]!, Number(match[1]));
  return rows;
}

/** Every string literal `'TG_…'` in the server's sources: codes a client can receive. */
async function codesInSources(): Promise<Set<string>> {
  const found = new Set<string>();
  for (const folder of ['src', 'routes', 'policies']) {
    const files = await readdir(join(root, folder), { recursive: true });
    for (const file of files.filter((name) => name.endsWith('.ts'))) {
      const text = await readFile(join(root, folder, file), 'utf8');
      for (const match of text.matchAll(/['"`](TG_[A-Z][A-Z_]*)['"`]/g)) found.add(match[1]!);
    }
  }
  return found;
}

describe('the reference documents', () => {
  it('docs/api.md lists every code of src/errors.ts in its error table, with its HTTP status, and no other', () => {
    const table = errorTable(api);
    const expected = new Map(Object.entries(errors).map(([code, Make]) => [code, new Make('x').statusCode]));
    expect([...table.keys()].sort()).toEqual([...expected.keys()].sort());
    for (const [code, status] of expected) expect(table.get(code), code).toBe(status);
  });

  it('has every TG_ code the sources send in the one table, src/errors.ts', async () => {
    const unlisted = [...(await codesInSources())].filter((code) => !Object.hasOwn(errors, code));
    expect(unlisted).toEqual([]);
  });

  it('docs/configuration.md names only files that exist in its whole-file configuration', () => {
    const block = /## The whole file at a glance[\s\S]*?```yaml\n([\s\S]*?)```/.exec(configuration)?.[1];
    expect(block, 'docs/configuration.md needs the whole file as a ```yaml block under "## The whole file at a glance"').toBeDefined();
    const paths: string[] = [];
    const visit = (value: unknown, key?: string): void => {
      if (Array.isArray(value)) value.forEach((item) => visit(item, key));
      else if (value !== null && typeof value === 'object') for (const [k, v] of Object.entries(value)) visit(v, k);
      else if (typeof value === 'string' && (key === 'module' || key === 'documents') && value.startsWith('.')) paths.push(value);
    };
    visit(parseYaml(block!));
    expect(paths.length).toBeGreaterThanOrEqual(3);
    expect(paths.filter((path) => !existsSync(join(root, path)))).toEqual([]);
  });
});
