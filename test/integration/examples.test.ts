import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildServer } from '../../src/app.js';
import { demoConfig, packageRoot } from '../../src/config/demo.js';

const run = promisify(execFile);
const root = packageRoot();
const KEY = 'readme-example-key';
const APPROVER_KEY = 'readme-example-approver-key';
let app: FastifyInstance;
let url: string;
let readme: string;

beforeAll(async () => {
  readme = await readFile(join(root, 'README.md'), 'utf8');
  const { config } = demoConfig({ TOOLGATE_DEV_API_KEY: KEY, TOOLGATE_DEV_APPROVER_KEY: APPROVER_KEY });
  app = await buildServer(config, { logger: false, defaultMetrics: false });
  url = await app.listen({ host: '127.0.0.1', port: 0 });
});
afterAll(async () => app.close());

// Exactly the variables the demo's banner exports: an example using any other name fails under `bash -u`.
const env = (): NodeJS.ProcessEnv => {
  const { KEY: _key, TOOLGATE: _url, APPROVER: _approver, ID: _id, ...rest } = process.env;
  return { ...rest, TOOLGATE_URL: url, TOOLGATE_API_KEY: KEY, TOOLGATE_APPROVER_KEY: APPROVER_KEY };
};

/** The ```bash block after `<!-- marker -->` in the README. */
function readmeBlock(marker: string): string {
  const block = new RegExp(`<!-- ${marker} -->\\s*\`\`\`bash\\n([\\s\\S]*?)\`\`\``).exec(readme)?.[1];
  expect(block, `README.md needs a \`\`\`bash block after <!-- ${marker} -->`).toBeDefined();
  return block!;
}

const runBlock = (marker: string) => run('bash', ['-euo', 'pipefail', '-c', readmeBlock(marker)], { env: env(), timeout: 20_000 });

describe('the README examples, against a real listening demo server', () => {
  it('the Python (stdlib) client lists tools, runs one and shows an error', async () => {
    const { stdout } = await run('python3', [join(root, 'examples/clients/python_client.py')], { env: env(), timeout: 20_000 });
    expect(stdout).toContain("tools: ['add_numbers', 'calc_add', 'echo', 'get_weather', 'knowledge_search', 'send_announcement']");
    expect(stdout).toContain('result: True {"city":"Paris","tempC":18,"conditions":"cloudy"}');
    expect(stdout).toMatch(/error: VALIDATION_ERROR TOOL_ERROR: \{"errorType":"VALIDATION_ERROR"/);
  });

  it('the TypeScript client lists tools and runs calls', async () => {
    const { stdout } = await run(join(root, 'node_modules/.bin/tsx'), [join(root, 'examples/clients/typescript-client.ts')], { env: env(), timeout: 30_000 });
    expect(stdout).toContain('tools: add_numbers, calc_add, echo, get_weather, knowledge_search');
    expect(stdout).toContain('result: true {"sum":42}');
  });

  it('the MCP client (official SDK) lists and calls tools through /mcp', async () => {
    const { stdout } = await run(join(root, 'node_modules/.bin/tsx'), [join(root, 'examples/clients/mcp-client.ts')], { env: env(), timeout: 30_000 });
    expect(stdout).toContain('tools: add_numbers, calc_add, echo, get_weather, knowledge_search');
    expect(stdout).toContain('result: [{"type":"text","text":"{\\"city\\":\\"Paris\\",\\"tempC\\":18,\\"conditions\\":\\"cloudy\\"}"}]');
    expect(stdout).toContain('isError: true');
  });

  it('the curl session of the README runs as written', async () => {
    const { stdout } = await runBlock('curl-session');
    expect(stdout).toContain('"name":"get_weather"');
    expect(stdout).toContain('"ok":true');
    expect(stdout).toContain('"errorType":"UNKNOWN_TOOL"');
    expect(stdout).toContain('"code":"TG_UNAUTHENTICATED"');
  });

  it('the approval example runs against the demo: requested by the user, approved by the demo approver, its result stored', async () => {
    const { stdout } = await runBlock('approval-session');
    const [id, pending, approved, fetched] = stdout.trim().split('\n');
    expect(id).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(pending).toContain(`"id":"${id}"`);
    expect(approved).toContain('"status":"approved"');
    expect(JSON.parse(fetched!)).toMatchObject({ id, status: 'approved', decidedBy: 'demo-approver', result: { ok: true, output: '{"posted":true,"title":"Printer on fire","urgent":false,"by":"demo-user"}' } });
  });

  it('the user MCP server example shows the egress refusal of a server on this machine, the list, and a DELETE sent with a JSON content type', async () => {
    const { stdout } = await runBlock('user-mcp-session');
    const [put, list, remove] = stdout.trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(put).toMatchObject({ statusCode: 400, code: 'TG_EGRESS_DENIED' });
    expect(list).toEqual({ servers: [] });
    expect(remove).toMatchObject({ statusCode: 404, code: 'TG_NOT_FOUND' });
  });

  it.each([
    ['python3', 'examples/clients/python_client.py'],
    [join(root, 'node_modules/.bin/tsx'), 'examples/clients/typescript-client.ts'],
    [join(root, 'node_modules/.bin/tsx'), 'examples/clients/mcp-client.ts'],
  ])('%s %s says which variable is missing instead of failing on it', async (command, script) => {
    const { TOOLGATE_API_KEY: _unset, ...rest } = env();
    const outcome = await run(command, [join(root, script)], { env: rest, timeout: 30_000 }).then(
      () => ({ code: 0, stderr: '' }),
      (error: { code?: number; stderr?: string }) => ({ code: error.code ?? 0, stderr: error.stderr ?? '' }),
    );
    expect(outcome.code).not.toBe(0);
    expect(outcome.stderr).toContain('set TOOLGATE_API_KEY to an API key');
    expect(outcome.stderr).not.toMatch(/KeyError|Traceback|    at /);
  });
});
