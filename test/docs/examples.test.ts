// The examples of the README (its tour) and of docs/ (getting-started's curl session, governance's
// approval, mcp's user servers) and the example clients, run as written against a real listening demo.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildServer } from '../../src/app.js';
import { demoConfig, packageRoot } from '../../src/config/demo.js';
import { docBlock } from '../helpers/doc-blocks.js';

const run = promisify(execFile);
const root = packageRoot();
const KEY = 'docs-example-key';
const APPROVER_KEY = 'docs-example-approver-key';
const OPERATOR_KEY = 'docs-example-operator-key';
let app: FastifyInstance;
let url: string;

beforeAll(async () => {
  const { config } = demoConfig({ TOOLGATE_DEV_API_KEY: KEY, TOOLGATE_DEV_APPROVER_KEY: APPROVER_KEY, TOOLGATE_DEV_OPERATOR_KEY: OPERATOR_KEY, LOG_LEVEL: 'silent' });
  app = await buildServer(config, { logger: false, defaultMetrics: false });
  url = await app.listen({ host: '127.0.0.1', port: 0 });
});
afterAll(async () => app.close());

// Exactly the variables the demo's banner exports: an example using any other name fails under `bash -u`.
const env = (): NodeJS.ProcessEnv => {
  const { KEY: _key, TOOLGATE: _url, APPROVER: _approver, ID: _id, ...rest } = process.env;
  return { ...rest, TOOLGATE_URL: url, TOOLGATE_API_KEY: KEY, TOOLGATE_APPROVER_KEY: APPROVER_KEY, TOOLGATE_OPERATOR_KEY: OPERATOR_KEY };
};

const runBlock = (file: string, marker: string, timeout = 20_000) => run('bash', ['-euo', 'pipefail', '-c', docBlock(file, marker)], { env: env(), timeout, cwd: root });

describe('the examples of the README and docs/, against a real listening demo server', () => {
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
    expect(stdout).toContain('get_weather answered: {"city":"Paris","tempC":18,"conditions":"cloudy"}');
    // The failure is shown as what it says, not as a bare flag.
    expect(stdout).toContain('an unknown tool answers: TOOL_ERROR: {"errorType":"UNKNOWN_TOOL"');
    // Beyond the demo: any tool of the pool, named with its arguments.
    const named = await run(join(root, 'node_modules/.bin/tsx'), [join(root, 'examples/clients/mcp-client.ts'), 'add_numbers', '{"numbers":[40,2]}'], { env: env(), timeout: 30_000 });
    expect(named.stdout).toContain('add_numbers answered: {"sum":42}');
  });

  it("the README's five-minute tour runs as written: list, call, approval, and an MCP client on the desk toolset (a function tool and the MCP upstream's)", { timeout: 60_000 }, async () => {
    const { stdout } = await runBlock('README.md', 'tour', 50_000);
    const lines = stdout.trim().split('\n');
    expect(lines[0]).toContain('"name":"get_weather"');
    expect(lines[0]).toContain('"name":"calc_add"');
    expect(JSON.parse(lines[1]!)).toMatchObject({ name: 'get_weather', ok: true });
    const id = lines[2]!;
    expect(id).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(lines[3]).toContain('"status":"approved"');
    expect(JSON.parse(lines[4]!)).toMatchObject({ id, status: 'approved', result: { ok: true } });
    expect(lines[5]).toBe('tools: calc_add, get_weather');
    expect(lines[6]).toContain('get_weather answered: {"city":"Paris"');
  });

  it('the curl session of docs/getting-started.md runs as written', async () => {
    const { stdout } = await runBlock('docs/getting-started.md', 'curl-session');
    expect(stdout).toContain('"name":"get_weather"');
    expect(stdout).toContain('"ok":true');
    expect(stdout).toContain('"errorType":"UNKNOWN_TOOL"');
    expect(stdout).toContain('"code":"TG_UNAUTHENTICATED"');
  });

  it('the approval example runs against the demo: requested by the user, approved by the demo approver, its result stored', async () => {
    const { stdout } = await runBlock('docs/governance.md', 'approval-session');
    const [id, pending, approved, fetched] = stdout.trim().split('\n');
    expect(id).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(pending).toContain(`"id":"${id}"`);
    expect(approved).toContain('"status":"approved"');
    expect(JSON.parse(fetched!)).toMatchObject({ id, status: 'approved', decidedBy: 'demo-approver', result: { ok: true, output: '{"posted":true,"title":"Printer on fire","urgent":false,"by":"demo-user"}' } });
  });

  it('the user MCP server example shows the egress refusal of a server on this machine, the list, and a DELETE sent with a JSON content type', async () => {
    const { stdout } = await runBlock('docs/mcp.md', 'user-mcp-session');
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
