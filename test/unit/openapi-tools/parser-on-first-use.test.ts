// The OpenAPI parser (and its dependencies) is loaded with the first document, not at start: a gateway without
// OpenAPI sources never holds it (bench/results.md, issue 46). Checked in a child process whose module
// resolutions are recorded by a resolve hook, since this process has loaded everything already.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { packageRoot } from '../../../src/config/demo.js';

const dir = mkdtempSync(join(tmpdir(), 'tg-openapi-lazy-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the OpenAPI parser', () => {
  it('is not loaded with the app, and is loaded by the first document parsed', () => {
    const log = join(dir, 'resolved.log');
    const hook = join(dir, 'hook.mjs');
    writeFileSync(hook, `import { appendFileSync } from 'node:fs';\nexport async function resolve(specifier, context, next) {\n  const resolved = await next(specifier, context);\n  appendFileSync(${JSON.stringify(log)}, resolved.url + '\\n');\n  return resolved;\n}\n`);
    const register = join(dir, 'register.mjs');
    writeFileSync(register, `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(hook).href)});\n`);
    const src = (path: string): string => JSON.stringify(pathToFileURL(join(packageRoot(), path)).href);
    const script = `
      import { appendFileSync } from 'node:fs';
      await import(${src('src/app.ts')});
      appendFileSync(${JSON.stringify(log)}, 'APP LOADED\\n');
      const { parseOpenApiDocument } = await import(${src('src/openapi-tools/parse-document.ts')});
      const parsed = await parseOpenApiDocument(JSON.stringify({ openapi: '3.0.3', info: { title: 't', version: '1' }, paths: { '/a': { post: { requestBody: { content: { 'application/json': { schema: { $ref: '#/components/schemas/A' } } } }, responses: { 200: { description: 'ok' } } } } }, components: { schemas: { A: { type: 'string' } } } }));
      process.stdout.write(JSON.stringify(parsed.document.paths));`;
    const child = spawnSync(process.execPath, ['--import', register, '--import', 'tsx', '--input-type=module', '-e', script], { cwd: packageRoot(), encoding: 'utf8', timeout: 60_000 });
    expect(child.status, child.stderr).toBe(0);
    // The reference was resolved by the parser.
    expect(child.stdout).toContain('"schema":{"type":"string"}');
    expect(child.stdout).not.toContain('$ref');
    const [atStart, afterParse] = readFileSync(log, 'utf8').split('APP LOADED\n') as [string, string];
    expect(atStart).toContain('/src/openapi-tools/parse-document.ts');
    expect(atStart).not.toContain('@readme/openapi-parser');
    expect(afterParse).toContain('@readme/openapi-parser');
  });
});
