// Code mode (docs/code-mode.md): what a model receives for the GitHub OpenAPI import as plain tools, as
// deferred tools with tool_search, and in code mode; a 20-step dependent task as one script against 20
// round trips; the sandbox's start time and its cost per inner call; the same token counts for a 500-tool
// MCP mix (five loopback MCP services). In-process (app.inject), one run.
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';
import type { FastifyInstance } from 'fastify';
import { countTokens } from 'gpt-tokenizer';
import { buildServer } from '../src/app.js';
import { DEFAULT_SANDBOX_LIMITS } from '../src/code-mode/limits.js';
import { runInSandbox } from '../src/code-mode/sandbox.js';
import { validateConfigObject } from '../src/config/load.js';
import { createTestState, startHttpTestServer, type HttpTestServer, type TestTool } from '../test/fixtures/mcp/test-server.js';
import { silentLogger } from './silent-logger.js';

const API_KEY = 'tg_bench_code_mode';
const LAZY_KEY = 'tg_bench_code_mode_lazy';
const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');
const GITHUB_SPEC = createRequire(import.meta.url).resolve('@octokit/openapi/generated/api.github.com.json');
/** A task's three tools, and the queries a model would search them with. */
const TASK_TOOLS = ['github_repos_get', 'github_issues_list-for-repo', 'github_issues_create-comment'];
const TASK_QUERIES = ['get a repository', 'list repository issues', 'create an issue comment'];
const STEPS = 20;

async function start(): Promise<FastifyInstance> {
  const config = validateConfigObject(
    {
      auth: { apiKeys: [{ id: 'bench', sha256: sha256(API_KEY), tenant: 'acme', user: 'bench' }, { id: 'lazy', sha256: sha256(LAZY_KEY), tenant: 'lazy', user: 'bench' }] },
      audit: { sink: 'off' },
      logging: { level: 'silent' },
      // Listed with full schemas (the import defers past 50 operations by default); the `lazy` tenant defers them all.
      openapi: [{ name: 'github', spec: GITHUB_SPEC, defer: false }],
      functions: [{ module: './test/fixtures/functions/code-mode.mjs' }],
      tenants: {
        acme: {
          functions: ['github_*', 'add'],
          policies: { 'rate-limit': false },
          toolsets: { plain: { tools: ['github_*'] }, code: { tools: ['github_*'], mode: 'code' }, adder: { tools: ['add'], mode: 'code' } },
        },
        lazy: { functions: ['github_*'], deferThreshold: 1, policies: { 'rate-limit': false } },
      },
    },
    process.cwd(),
    undefined,
  );
  const app = await buildServer(config, { loggerInstance: silentLogger, defaultMetrics: false });
  await app.ready();
  return app;
}

const headers = { authorization: `Bearer ${API_KEY}` };
const lazyHeaders = { authorization: `Bearer ${LAZY_KEY}` };

async function execute(app: FastifyInstance, payload: Record<string, unknown>, auth = headers): Promise<{ body: string; json: { ok: boolean; output: string } }> {
  const res = await app.inject({ method: 'POST', url: '/v1/execute', headers: auth, payload });
  return { body: res.body, json: res.json() as { ok: boolean; output: string } };
}

export async function bench(): Promise<string> {
  const app = await start();
  try {
    // Loads the engine and the type stripper once: start-up, not part of any measurement below.
    await execute(app, { name: 'run_script', arguments: { code: 'return 1' }, toolset: 'adder' });
    const lines: string[] = ['## Code mode', ''];
    const plainCount = (JSON.parse((await app.inject({ url: '/v1/tools?toolset=plain', headers })).body) as { tools: unknown[] }).tools.length;
    lines.push(...(await tokenShapes(app, `GitHub OpenAPI import, ${plainCount} tools`, TASK_TOOLS, TASK_QUERIES)));

    // 20 dependent calls: each needs the previous result.
    const script = `let x = 0; for (let i = 0; i < ${STEPS}; i++) x = (await tools.add({ a: x, b: i })).sum; return x;`;
    let started = performance.now();
    const scripted = await execute(app, { name: 'run_script', arguments: { code: script }, toolset: 'adder' });
    const scriptMs = performance.now() - started;
    started = performance.now();
    let x = 0;
    let bytes = 0;
    for (let i = 0; i < STEPS; i++) {
      const step = await execute(app, { name: 'add', arguments: { a: x, b: i } });
      bytes += Buffer.byteLength(step.body);
      x = (JSON.parse(step.json.output) as { sum: number }).sum;
    }
    const tripsMs = performance.now() - started;
    lines.push(
      `### ${STEPS} dependent calls (in-process inject, no model latency counted)`,
      '',
      '| | wall ms | bytes back to the model |',
      '|---|---:|---:|',
      `| one run_script | ${scriptMs.toFixed(1)} | ${Buffer.byteLength(scripted.body)} |`,
      `| ${STEPS} /v1/execute round trips | ${tripsMs.toFixed(1)} | ${bytes} |`,
      '',
    );

    // Sandbox start, and the cost of one inner call over a direct call.
    const echo = async () => ({ resolve: '{"sum":1}' });
    const startTimes: number[] = [];
    for (let i = 0; i < 30; i++) {
      const t = performance.now();
      await runInSandbox('return 1', echo, DEFAULT_SANDBOX_LIMITS);
      startTimes.push(performance.now() - t);
    }
    startTimes.sort((a, b) => a - b);
    const CALLS = 100;
    const loop = `for (let i = 0; i < ${CALLS}; i++) await tools.add({ a: i, b: 1 }); return 1;`;
    let t = performance.now();
    await runInSandbox(loop, echo, { ...DEFAULT_SANDBOX_LIMITS, maxToolCalls: CALLS });
    const sandboxPerCall = (performance.now() - t - (startTimes[15] ?? 0)) / CALLS;
    t = performance.now();
    await execute(app, { name: 'run_script', arguments: { code: loop }, toolset: 'adder' });
    const throughGateway = performance.now() - t;
    t = performance.now();
    for (let i = 0; i < CALLS; i++) await execute(app, { name: 'add', arguments: { a: i, b: 1 } });
    const direct = performance.now() - t;
    lines.push(
      '### Sandbox',
      '',
      `- start (fresh runtime, \`return 1\`): median ${startTimes[15]?.toFixed(2)} ms, p90 ${startTimes[27]?.toFixed(2)} ms (30 runs).`,
      `- sandbox crossing per inner call (host answers at once): ${(sandboxPerCall * 1000).toFixed(0)} µs.`,
      `- ${CALLS} calls of \`add\`: inside one run_script ${throughGateway.toFixed(1)} ms (${((throughGateway / CALLS) * 1000).toFixed(0)} µs each, executeCall included) vs ${CALLS} direct /v1/execute requests ${direct.toFixed(1)} ms (${((direct / CALLS) * 1000).toFixed(0)} µs each).`,
      '',
    );
    lines.push(...(await mcpMixTokens()));
    return lines.join('\n');
  } finally {
    await app.close();
  }
}

/**
 * Tokens a model reads for a catalog: the listing (the `plain` toolset, the `lazy` tenant's deferred
 * listing, the `code` toolset), plus what it must read to call the task's tools.
 */
async function tokenShapes(app: FastifyInstance, catalog: string, task: readonly string[], queries: readonly string[]): Promise<string[]> {
  const plain = (await app.inject({ url: '/v1/tools?toolset=plain', headers })).body;
  const code = (await app.inject({ url: '/v1/tools?toolset=code', headers })).body;
  const deferredListing = (await app.inject({ url: '/v1/tools', headers: lazyHeaders })).body;
  if (!deferredListing.includes('"deferLoading":true') || plain.includes('"deferLoading":true')) throw new Error('the plain and deferred listings are not what they claim');
  const names = (JSON.parse(plain) as { tools: Array<{ name: string }> }).tools.map((tool) => tool.name);
  for (const name of task) if (!names.includes(name)) throw new Error(`the catalog has no ${name}`);
  const searches = await Promise.all(queries.map(async (query) => (await execute(app, { name: 'search_tools', arguments: { query, limit: 1 }, toolset: 'code' })).json.output));
  const described = (await execute(app, { name: 'describe_tools', arguments: { names: task }, toolset: 'code' })).json.output;
  const toolSearches = await Promise.all(queries.map(async (query) => (await execute(app, { name: 'tool_search', arguments: { query, limit: 1 } }, lazyHeaders)).json.output));
  const tokens = (text: string) => countTokens(text);
  const hits = (answers: string[]) => answers.filter((answer, i) => answer.includes(task[i] ?? '\u0000')).length;
  const lookups = tokens(searches.join('') + described);
  return [
    `### Tokens (gpt-tokenizer, o200k): ${catalog}; task: ${task.join(', ')}`,
    '',
    '| shape | listing | task look-ups | total |',
    '|---|---:|---:|---:|',
    `| plain tools | ${tokens(plain)} | 0 | ${tokens(plain)} |`,
    `| deferred + tool_search | ${tokens(deferredListing)} | ${tokens(toolSearches.join(''))} | ${tokens(deferredListing) + tokens(toolSearches.join(''))} |`,
    `| code mode (search_tools + describe_tools) | ${tokens(code)} | ${lookups} | ${tokens(code) + lookups} |`,
    '',
    `Top hit is the task's tool: search_tools ${hits(searches)}/${task.length}, tool_search ${hits(toolSearches)}/${task.length}.`,
    '',
  ];
}

/** Five MCP services of 100 tools each, with the kinds of schemas such services carry. */
const MIX_SERVICES = ['crm', 'tickets', 'files', 'calendar', 'billing'];
const MIX_VERBS = ['get', 'list', 'create', 'update', 'delete', 'search', 'archive', 'export', 'import', 'sync'];
const MIX_NOUNS = ['account', 'contact', 'note', 'item', 'report', 'tag', 'comment', 'attachment', 'owner', 'setting'];
const MIX_TASK = ['crm_get_account', 'tickets_list_comment', 'billing_create_report'];
const MIX_QUERIES = ['get a crm account', 'list ticket comments', 'create a billing report'];

function mixTools(service: string): TestTool[] {
  return MIX_VERBS.flatMap((verb, v) =>
    MIX_NOUNS.map((noun, n) => ({
      definition: {
        name: `${service}_${verb}_${noun}`,
        description: `${verb[0]?.toUpperCase()}${verb.slice(1)} a ${service} ${noun}. Returns the ${noun} record with its id, owner, timestamps and custom fields; fails when the caller may not see it.`,
        inputSchema: {
          type: 'object' as const,
          properties: {
            id: { type: 'string', description: `The ${noun}'s id, as returned by ${service}_list_${noun}.` },
            workspace: { type: 'string', description: `The ${service} workspace the ${noun} belongs to.` },
            fields: { type: 'array', items: { type: 'string' }, description: 'Fields to return (default: all).' },
            ...(v % 2 === 0 ? { limit: { type: 'integer', minimum: 1, maximum: 100, description: 'Page size.' }, cursor: { type: 'string', description: 'Cursor of the next page.' } } : {}),
            ...(n % 3 === 0 ? { filter: { type: 'object', properties: { owner: { type: 'string' }, updatedAfter: { type: 'string', format: 'date-time' } }, description: 'Only matching records.' } } : {}),
          },
          required: ['workspace'],
        },
      },
      run: () => ({ content: [{ type: 'text' as const, text: '{}' }] }),
    })),
  );
}

/** Tokens for the 500-tool MCP mix: plain listing, deferred + tool_search, code mode. */
async function mcpMixTokens(): Promise<string[]> {
  const servers: HttpTestServer[] = [];
  let app: FastifyInstance | undefined;
  try {
    for (const service of MIX_SERVICES) servers.push(await startHttpTestServer(createTestState(mixTools(service))));
    const config = validateConfigObject(
      {
        auth: { apiKeys: [{ id: 'bench', sha256: sha256(API_KEY), tenant: 'mix', user: 'bench' }, { id: 'lazy', sha256: sha256(LAZY_KEY), tenant: 'lazy', user: 'bench' }] },
        audit: { sink: 'off' },
        logging: { level: 'silent' },
        egress: { allow: ['127.0.0.1'] },
        mcp: { global: MIX_SERVICES.map((id, i) => ({ id, transport: 'streamable-http', url: servers[i]?.url })) },
        tenants: {
          mix: { mcpServices: MIX_SERVICES, policies: { 'rate-limit': false }, toolsets: { plain: { tools: ['*'] }, code: { tools: ['*'], mode: 'code' } } },
          lazy: { mcpServices: MIX_SERVICES, deferThreshold: 1, policies: { 'rate-limit': false } },
        },
      },
      process.cwd(),
      undefined,
    );
    app = await buildServer(config, { loggerInstance: silentLogger, defaultMetrics: false });
    await app.ready();
    return await tokenShapes(app, `500-tool MCP mix (${MIX_SERVICES.length} services)`, MIX_TASK, MIX_QUERIES);
  } finally {
    await app?.close();
    for (const server of servers) await server.close();
  }
}
