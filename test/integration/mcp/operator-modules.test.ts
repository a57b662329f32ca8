// Operator modules as they are really deployed: in the operator's own folder (outside the repo, no
// node_modules there), importing packages toolgate itself depends on; and a local MCP module that fails
// to load while the rest of the gateway is still starting.
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { validateConfigObject } from '../../../src/config/load.js';
import { API_KEY, bearer, buildTestApp, sha256 } from '../../helpers/build.js';
import { freePort, startServer } from '../../helpers/server-process.js';

let dir: string;
const apps: FastifyInstance[] = [];
const children: ChildProcess[] = [];
const headers = bearer(API_KEY);

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'toolgate-operator-modules-'));
  // A local MCP server written as docs/mcp.md shows it, in a folder with no node_modules.
  await writeFile(
    join(dir, 'calc.mjs'),
    `import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
const server = new McpServer({ name: 'calc', version: '1.0.0' });
server.registerTool('add', { description: 'Adds', inputSchema: { a: z.number(), b: z.number() } }, async ({ a, b }) => ({ content: [{ type: 'text', text: String(a + b) }] }));
export default server;
`,
  );
  // A function module using one of toolgate's dependencies.
  await writeFile(
    join(dir, 'glob-tool.mjs'),
    `import picomatch from 'picomatch';
export default { name: 'matches', description: 'Glob match', inputSchema: { type: 'object', properties: { glob: { type: 'string' }, path: { type: 'string' } } },
  handler: ({ glob, path }) => String(picomatch(glob)(path)) };
`,
  );
  await writeFile(join(dir, 'missing-package.mjs'), `import 'surely-not-a-package-toolgate-has';\nexport default {};\n`);
  await writeFile(join(dir, 'broken.mjs'), `throw new Error('broken at import');\n`);
});
afterAll(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await Promise.all(apps.map((app) => app.close()));
  await rm(dir, { recursive: true, force: true });
});

const config = (raw: Record<string, unknown>) =>
  validateConfigObject(
    { auth: { apiKeys: [{ id: 'ci', sha256: sha256(API_KEY), tenant: 'acme', user: 'ci-bot', roles: ['admin'] }] }, audit: { sink: 'off' }, tenants: { acme: {} }, ...raw },
    dir,
    undefined,
  );

async function build(raw: Record<string, unknown>, lines: string[] = []): Promise<FastifyInstance> {
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  const app = await buildTestApp(config(raw), { logger: undefined, loggerInstance: pino({ level: 'info' }, stream) });
  apps.push(app);
  return app;
}

describe('operator modules outside the repo (the real server process: Node resolves their imports)', () => {
  it("import toolgate's own packages — a local MCP module (SDK + zod) and a function module (picomatch) in a temp folder — and a package neither has fails naming the importing file", { timeout: 30_000 }, async () => {
    expect(dir.startsWith(tmpdir())).toBe(true);
    const file = join(dir, 'toolgate.yaml');
    await writeFile(
      file,
      `auth:
  apiKeys:
    - { id: ci, sha256: "${sha256(API_KEY)}", tenant: acme, user: ci-bot, roles: [admin] }
audit: { sink: "off" }
metrics: { port: 0 }
functions:
  - module: ./glob-tool.mjs
mcp:
  local:
    - { service: calc, module: ./calc.mjs }
    - { service: nopkg, module: ./missing-package.mjs }
tenants:
  acme: {}
`,
    );
    const port = await freePort();
    const server = await startServer(file, children, { PORT: String(port) });
    await server.logLine((line) => typeof line.msg === 'string' && line.msg.startsWith('Server listening'));
    const call = async (name: string, args: Record<string, unknown>) =>
      (await (await request(`http://127.0.0.1:${port}/v1/execute`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify({ name, arguments: args }) })).body.json()) as { ok: boolean; output: string };
    expect(await call('calc_add', { a: 2, b: 3 })).toMatchObject({ ok: true, output: '5' });
    expect(await call('matches', { glob: '*.ts', path: 'a.ts' })).toMatchObject({ ok: true, output: 'true' });
    const missing = await server.logLine((line) => line.upstream === 'nopkg' && line.msg === 'upstream connect failed');
    expect(missing.error).toMatch(/Cannot find package 'surely-not-a-package-toolgate-has' imported from .*missing-package\.mjs/);
    server.child.kill('SIGTERM');
    expect((await server.exit).code).toBe(0);
  });
});

describe('a local MCP module that fails to load', () => {
  it('logs one warning per attempt with the reason and no stack, and nothing at error level, while a later provider is still starting', { timeout: 20_000 }, async () => {
    const lines: string[] = [];
    // The global stdio service takes about a second to fail its start, so the local module's retries
    // (every 100-200 ms at first) happen before the first config snapshot exists.
    const app = await build(
      {
        mcp: { local: [{ service: 'calc', module: './broken.mjs' }], global: [{ id: 'slow', transport: 'stdio', command: 'sleep', args: ['1'] }] },
        logging: { level: 'info' },
      },
      lines,
    );
    await vi.waitFor(() => expect(lines.filter((line) => line.includes('"upstream":"calc"')).length).toBeGreaterThanOrEqual(3), { timeout: 10_000 });
    const parsed = lines.map((line) => JSON.parse(line) as { level: number; msg: string; upstream?: string; error?: string; err?: unknown });
    expect(parsed.filter((line) => line.level >= 50)).toEqual([]);
    const failures = parsed.filter((line) => line.upstream === 'calc');
    for (const failure of failures) {
      expect(failure).toMatchObject({ level: 40, msg: 'upstream connect failed', error: `local MCP module ${join(dir, 'broken.mjs')} cannot be loaded: broken at import` });
      expect(failure.err).toBeUndefined();
    }
    expect(JSON.stringify(failures)).not.toContain('stack');
    // The gateway itself is up and answers.
    expect((await app.inject({ url: '/healthz' })).statusCode).toBe(200);
  });
});
