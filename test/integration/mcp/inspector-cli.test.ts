// The MCP Inspector connects: its CLI mode (npm `@modelcontextprotocol/inspector-cli` 1.0.3, pinned as a
// devDependency — the v1 Inspector's command line, 336 KB, built on the 1.x SDK client, which reaches
// toolgate's legacy era; it downloads nothing when it runs) is run as a child process against toolgate on
// a loopback port, lists the caller's tools and calls one, with the caller's bearer token as a header.
import { execFile } from 'node:child_process';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packageRoot } from '../../../src/config/demo.js';
import { buildTestApp, signToken, testConfig } from '../../helpers/build.js';

const run = promisify(execFile);
const INSPECTOR_CLI = join(packageRoot(), 'node_modules', '@modelcontextprotocol', 'inspector-cli', 'build', 'index.js');

let app: FastifyInstance;
let baseUrl: string;
let acmeToken: string;
let globexToken: string;

beforeAll(async () => {
  app = await buildTestApp(testConfig({ tenants: { acme: { toolsets: { weather: { tools: ['get_weather'] } } }, globex: { tools: { allow: ['*'], deny: ['get_weather'] } } } }));
  baseUrl = await app.listen({ host: '127.0.0.1', port: 0 });
  acmeToken = await signToken({ sub: 'alice', tenant: 'acme' });
  globexToken = await signToken({ sub: 'bob', tenant: 'globex' });
}, 30_000);
afterAll(async () => {
  await app?.close();
});

/** One Inspector CLI run: its JSON answer on stdout. Bounded in time; no network beyond the loopback port. */
async function inspect(path: string, token: string, ...args: string[]): Promise<unknown> {
  const { stdout } = await run(process.execPath, [INSPECTOR_CLI, `${baseUrl}${path}`, '--transport', 'http', '--header', `Authorization: Bearer ${token}`, ...args], {
    timeout: 20_000,
    // The CLI checks for its own package.json at `../package.json` from the working directory (and imports it
    // relative to itself): run it from its build folder, as it runs when the Inspector's launcher spawns it.
    cwd: dirname(INSPECTOR_CLI),
    env: { PATH: process.env.PATH ?? '', NO_COLOR: '1' },
  }).catch((error: unknown) => {
    // The CLI says why on stderr: keep it in the failure.
    const stderr = typeof error === 'object' && error !== null && 'stderr' in error ? String(error.stderr) : '';
    throw new Error(`the Inspector CLI failed: ${stderr.slice(0, 2000)}`, { cause: error });
  });
  return JSON.parse(stdout) as unknown;
}

describe('the MCP Inspector (CLI mode) against /mcp', () => {
  it("lists the caller's tools and calls one", async () => {
    const listed = (await inspect('/mcp', acmeToken, '--method', 'tools/list')) as { tools: Array<{ name: string }> };
    expect(listed.tools.map((tool) => tool.name)).toContain('get_weather');
    const called = await inspect('/mcp', acmeToken, '--method', 'tools/call', '--tool-name', 'get_weather', '--tool-arg', 'city=Oslo');
    expect(called).toMatchObject({ content: [{ type: 'text', text: '{"city":"Oslo","tempC":21}' }] });
  }, 60_000);

  it('sees a toolset narrowed, and another tenant sees none of it', async () => {
    const narrowed = (await inspect('/mcp/weather', acmeToken, '--method', 'tools/list')) as { tools: Array<{ name: string }> };
    expect(narrowed.tools.map((tool) => tool.name)).toEqual(['get_weather']);
    const other = (await inspect('/mcp', globexToken, '--method', 'tools/list')) as { tools: Array<{ name: string }> };
    expect(other.tools.map((tool) => tool.name)).not.toContain('get_weather');
  }, 60_000);

  it('is refused without a valid token', async () => {
    await expect(inspect('/mcp', 'not-a-token', '--method', 'tools/list')).rejects.toThrow();
  }, 60_000);
});
