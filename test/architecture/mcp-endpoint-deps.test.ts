// toolgate's MCP code takes explicit dependencies (src/mcp/server/deps.ts), never the Fastify instance: no
// file under src/mcp/ names `FastifyInstance` or reads a decorator off it (`app.gateway`, `app.governance`,
// `app.drain`, `app.metrics`, `app.tenantSlots`); routes/mcp.ts is where the endpoint is wired.
import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { packageRoot } from '../../src/config/demo.js';

const root = packageRoot();

/** Code with its comments blanked, so prose naming the instance is not mistaken for a use of it. */
const withoutComments = (text: string): string => text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1');

const FASTIFY_INSTANCE = /\bFastifyInstance\b/;
const DECORATOR_READ = /\bapp\.(gateway|governance|drain|metrics|tenantSlots)\b/;

describe('src/mcp/', () => {
  it('holds no FastifyInstance and reads no decorator off the app', async () => {
    const folder = join(root, 'src', 'mcp');
    const offending: string[] = [];
    for (const entry of await readdir(folder, { recursive: true })) {
      if (!entry.endsWith('.ts')) continue;
      const path = join(folder, entry);
      const code = withoutComments(await readFile(path, 'utf8'));
      for (const pattern of [FASTIFY_INSTANCE, DECORATOR_READ]) {
        const found = pattern.exec(code);
        if (found) offending.push(`${relative(root, path)}: ${found[0]}`);
      }
    }
    expect(offending).toEqual([]);
  });

  it("checks a request's params on the server side: nothing under src/mcp/server or routes/ imports the client's modules for it", async () => {
    const offending: string[] = [];
    for (const folder of [join(root, 'src', 'mcp', 'server'), join(root, 'routes')]) {
      for (const entry of await readdir(folder, { recursive: true })) {
        if (!entry.endsWith('.ts')) continue;
        const code = withoutComments(await readFile(join(folder, entry), 'utf8'));
        for (const match of code.matchAll(/from '([^']*mcp\/client\/call-params\.js)'/g)) offending.push(`${entry}: ${match[1]}`);
      }
    }
    expect(offending).toEqual([]);
  });
});
