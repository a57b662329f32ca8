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
let app: FastifyInstance;
let url: string;

beforeAll(async () => {
  const { config } = demoConfig({ TOOLGATE_DEV_API_KEY: KEY });
  app = await buildServer(config, { logger: false, defaultMetrics: false });
  url = await app.listen({ host: '127.0.0.1', port: 0 });
});
afterAll(async () => app.close());

const env = () => ({ ...process.env, TOOLGATE_URL: url, TOOLGATE_API_KEY: KEY, KEY, TOOLGATE: url });

describe('the README examples, against a real listening demo server', () => {
  it('the Python (stdlib) client lists tools, runs one and shows an error', async () => {
    const { stdout } = await run('python3', [join(root, 'examples/clients/python_client.py')], { env: env(), timeout: 20_000 });
    expect(stdout).toContain("tools: ['add_numbers', 'echo', 'get_weather', 'knowledge_search', 'send_announcement']");
    expect(stdout).toContain('result: True {"city":"Paris","tempC":18,"conditions":"cloudy"}');
    expect(stdout).toMatch(/error: VALIDATION_ERROR TOOL_ERROR: \{"errorType":"VALIDATION_ERROR"/);
  });

  it('the TypeScript client lists tools and runs calls', async () => {
    const { stdout } = await run(join(root, 'node_modules/.bin/tsx'), [join(root, 'examples/clients/typescript-client.ts')], { env: env(), timeout: 30_000 });
    expect(stdout).toContain('tools: add_numbers, echo, get_weather, knowledge_search');
    expect(stdout).toContain('result: true {"sum":42}');
  });

  it('the MCP client (official SDK) lists and calls tools through /mcp', async () => {
    const { stdout } = await run(join(root, 'node_modules/.bin/tsx'), [join(root, 'examples/clients/mcp-client.ts')], { env: env(), timeout: 30_000 });
    expect(stdout).toContain('tools: add_numbers, echo, get_weather, knowledge_search');
    expect(stdout).toContain('result: [{"type":"text","text":"{\\"city\\":\\"Paris\\",\\"tempC\\":18,\\"conditions\\":\\"cloudy\\"}"}]');
    expect(stdout).toContain('isError: true');
  });

  it('the curl session of the README runs as written', async () => {
    const readme = await readFile(join(root, 'README.md'), 'utf8');
    const block = /<!-- curl-session -->\s*```bash\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(block, 'README.md needs a ```bash block after <!-- curl-session -->').toBeDefined();
    const { stdout } = await run('bash', ['-euo', 'pipefail', '-c', block!], { env: env(), timeout: 20_000 });
    expect(stdout).toContain('"name":"get_weather"');
    expect(stdout).toContain('"ok":true');
    expect(stdout).toContain('"errorType":"UNKNOWN_TOOL"');
    expect(stdout).toContain('"code":"TG_UNAUTHENTICATED"');
  });
});
