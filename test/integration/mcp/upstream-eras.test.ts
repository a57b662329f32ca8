// Upstreams of either MCP era behind one gateway: a modern-only server (SDK v2, 2026-07-28, stateless, no
// initialize) and a legacy-only one (SDK v1), as global services and as a user's own servers; a modern
// upstream's `input_required` answered by a legacy MCP caller; the v1 SDK's elicitInput() from a local
// module; and a stdio upstream's question tied to the one call in flight on its pipe.
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { CLIENT_CAPABILITIES_META_KEY } from '@modelcontextprotocol/client';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_KEY, bearer, buildTestApp, OPERATOR_KEY, scrapeMetrics, signToken, testConfig } from '../../helpers/build.js';
import { startMcpUpstream, textTool, type TestUpstream } from '../../helpers/mcp-upstream.js';
import { confirmTool, startModernUpstream, type ModernTool, type ModernUpstream } from '../../helpers/modern-upstream.js';

const askStdio = fileURLToPath(new URL('../../fixtures/mcp/ask-stdio.mjs', import.meta.url));
const modernStdio = fileURLToPath(new URL('../../fixtures/mcp/modern-stdio.mjs', import.meta.url));
const strictStdio = fileURLToPath(new URL('../../fixtures/mcp/strict-stdio.mjs', import.meta.url));
let modern: ModernUpstream;
let legacy: TestUpstream;
let app: FastifyInstance;
let baseUrl: string;
let alice: string;

const modernTools: ModernTool[] = [
  { definition: { name: 'm_echo', description: 'modern echo', inputSchema: { type: 'object', properties: { text: { type: 'string' } } } }, call: (args) => ({ content: [{ type: 'text', text: `modern:${String(args.text)}` }] }) },
  confirmTool,
];

beforeAll(async () => {
  modern = await startModernUpstream(modernTools);
  legacy = await startMcpUpstream([textTool('l_echo', (args) => `legacy:${String(args.text)}`)]);
  app = await buildTestApp(
    testConfig({
      egress: { allow: ['127.0.0.1'] },
      mcp: {
        local: [{ service: 'asker', module: './test/fixtures/mcp/ask-module.mjs' }],
        global: [
          { id: 'modern', transport: 'streamable-http', url: modern.url, required: true, forwardIdentity: { 'X-Toolgate-Tenant': '${principal.tenant}' } },
          { id: 'legacy', transport: 'streamable-http', url: legacy.url, required: true },
          { id: 'pipe', transport: 'stdio', command: process.execPath, args: [askStdio], required: true, prefix: true },
          { id: 'mpipe', transport: 'stdio', command: process.execPath, args: [modernStdio], required: true, prefix: true },
          { id: 'strict', transport: 'stdio', command: process.execPath, args: [strictStdio], required: true },
        ],
      },
      tenants: { acme: { mcpServices: ['modern', 'legacy', 'pipe', 'mpipe', 'strict'] } },
    }),
  );
  baseUrl = await app.listen({ host: '127.0.0.1', port: 0 });
  alice = await signToken({ sub: 'alice' });
}, 60_000);
afterAll(async () => {
  await app?.close();
  await Promise.all([modern?.close(), legacy?.close()]);
});

const execute = async (token: string, name: string, args: Record<string, unknown> = {}) =>
  (await app.inject({ method: 'POST', url: '/v1/execute', headers: bearer(token), payload: { name, arguments: args } })).json() as { ok: boolean; output: string };

/** A legacy-era MCP caller of toolgate (the v1 SDK client) that answers elicitation with `colour`. */
async function caller(colour: string, asked: string[] = []): Promise<Client> {
  const client = new Client({ name: 'era-test', version: '1.0.0' }, { capabilities: { elicitation: {} } });
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    asked.push(request.params.message);
    return { action: 'accept', content: { colour } };
  });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp`), { requestInit: { headers: bearer(alice) } }));
  return client;
}
const text = (result: CallToolResult): string => result.content.map((block) => (block.type === 'text' ? block.text : '')).join('\n');

describe('global upstreams of either era', () => {
  it('lists and calls a modern-only and a legacy-only service side by side', async () => {
    const listed = (await app.inject({ method: 'GET', url: '/v1/tools', headers: bearer(alice) })).json() as { tools: Array<{ name: string }> };
    expect(listed.tools.map((tool) => tool.name)).toEqual(expect.arrayContaining(['m_echo', 'm_confirm', 'l_echo']));
    expect(await execute(alice, 'm_echo', { text: 'a' })).toMatchObject({ ok: true, output: 'modern:a' });
    expect(await execute(alice, 'l_echo', { text: 'b' })).toMatchObject({ ok: true, output: 'legacy:b' });
  });

  it("follows a modern upstream's list change, which comes through subscriptions/listen", async () => {
    modernTools.push({ definition: { name: 'm_late', description: 'added later', inputSchema: { type: 'object', properties: {} } }, call: () => ({ content: [{ type: 'text', text: 'late' }] }) });
    modern.toolsChanged();
    const names = async () => ((await app.inject({ method: 'GET', url: '/v1/tools', headers: bearer(alice) })).json() as { tools: Array<{ name: string }> }).tools.map((tool) => tool.name);
    for (let waited = 0; waited < 5_000 && !(await names()).includes('m_late'); waited += 100) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await names()).toContain('m_late');
    expect(modern.methods).toContain('subscriptions/listen');
    expect(await execute(alice, 'm_late')).toMatchObject({ ok: true, output: 'late' });
  });

  it('speaks legacy to a stdio server that exits on the server/discover probe (started again, not probed)', async () => {
    expect(await execute(alice, 'strict_hello')).toMatchObject({ ok: true, output: 'hello from a strict legacy server' });
  });

  it('probed the modern upstream with server/discover and never sent it initialize', () => {
    expect(modern.methods[0]).toBe('server/discover');
    expect(modern.methods).not.toContain('initialize');
    expect(modern.methods).toContain('tools/call');
  });

  it('sends a modern call its depth and forwarded identity as headers, never in the message, and never the caller authorization', () => {
    const at = modern.methods.indexOf('tools/call');
    expect(modern.headers[at]).toMatchObject({ 'x-toolgate-depth': '1', 'x-toolgate-tenant': 'acme', 'mcp-method': 'tools/call', 'mcp-name': 'm_echo' });
    expect(modern.headers.some((headers) => headers.authorization !== undefined)).toBe(false);
    expect(JSON.stringify(modern.params[at])).not.toContain('io.toolgate');
  });

  it('shows each upstream’s era to operators and in toolgate_upstream_era', async () => {
    const res = await app.inject({ method: 'GET', url: '/v1/admin/upstreams', headers: bearer(OPERATOR_KEY) });
    const byService = new Map((res.json().upstreams as Array<{ service: string; detail?: { era?: string } }>).map((entry) => [entry.service, entry.detail?.era]));
    expect(Object.fromEntries([...byService].filter(([service]) => ['modern', 'legacy', 'pipe', 'mpipe', 'strict', 'asker'].includes(service)))).toEqual({ modern: 'modern', legacy: 'legacy', pipe: 'legacy', mpipe: 'modern', strict: 'legacy', asker: 'legacy' });
    const metrics = await scrapeMetrics(app);
    expect(metrics).toContain('toolgate_upstream_era{service="modern",era="modern"} 1');
    expect(metrics).toContain('toolgate_upstream_era{service="modern",era="legacy"} 0');
    expect(metrics).toContain('toolgate_upstream_era{service="legacy",era="legacy"} 1');
  });
});

describe("a user's own servers of either era", () => {
  it('lists and calls a modern-only and a legacy-only server the user registered', async () => {
    for (const [id, url] of [['mod', modern.url], ['leg', legacy.url]] as const) {
      const put = await app.inject({ method: 'PUT', url: `/v1/users/alice/mcp-servers/${id}`, headers: bearer(alice), payload: { url } });
      expect(put.statusCode).toBe(201);
    }
    expect(await execute(alice, 'user_alice_tool_m_echo', { text: 'c' })).toMatchObject({ ok: true, output: 'modern:c' });
    expect(await execute(alice, 'user_alice_tool_l_echo', { text: 'd' })).toMatchObject({ ok: true, output: 'legacy:d' });
    // The owner sees the era of each connected server.
    const listed = (await app.inject({ url: '/v1/users/alice/mcp-servers', headers: bearer(alice) })).json() as { servers: Array<{ serviceId: string; era?: string }> };
    expect(Object.fromEntries(listed.servers.map((server) => [server.serviceId, server.era]))).toEqual({ mod: 'modern', leg: 'legacy' });
  });
});

describe("a modern upstream's input_required", () => {
  it('is asked of a legacy MCP caller as an elicitation request, and its answer completes the call', async () => {
    const asked: string[] = [];
    const client = await caller('blue', asked);
    try {
      const result = (await client.callTool({ name: 'm_confirm', arguments: {} })) as CallToolResult;
      expect(text(result)).toBe('modern asked:blue');
      expect(result.isError).toBeFalsy();
      expect(asked).toEqual(['Which colour (modern)?']);
    } finally {
      await client.close();
    }
  });

  it('is refused with a clear tool error when the caller cannot be asked (REST)', async () => {
    const result = await execute(alice, 'm_confirm');
    expect(result.ok).toBe(false);
    expect(result.output).toContain('UPSTREAM_ERROR');
    expect(result.output).toContain('elicitation/create not relayed');
  });
});

describe("the v1 SDK's elicitInput() from an upstream", () => {
  it('is declared to upstreams as elicitation.form, the shape the SDKs check', () => {
    const discover = modern.params[modern.methods.indexOf('server/discover')] as { _meta?: Record<string, unknown> };
    expect(discover._meta?.[CLIENT_CAPABILITIES_META_KEY]).toMatchObject({ elicitation: { form: {} }, sampling: {} });
  });

  it('reaches the caller', async () => {
    const client = await caller('green');
    try {
      const result = (await client.callTool({ name: 'asker_ask', arguments: {} })) as CallToolResult;
      expect(text(result)).toBe('accept:green');
    } finally {
      await client.close();
    }
  });
});

describe("a stdio upstream's question", () => {
  it('is asked of the caller whose call is the only one in flight on the pipe', async () => {
    const client = await caller('red');
    try {
      const result = (await client.callTool({ name: 'pipe_ask', arguments: {} })) as CallToolResult;
      expect(text(result)).toBe('accept:red');
    } finally {
      await client.close();
    }
  });

  it("of a modern stdio upstream (input_required) is asked of the one caller too, and a plain call is answered", async () => {
    expect(await execute(alice, 'mpipe_hello')).toMatchObject({ ok: true, output: 'hello from a modern stdio server' });
    const asked: string[] = [];
    const client = await caller('amber', asked);
    try {
      const result = (await client.callTool({ name: 'mpipe_confirm', arguments: {} })) as CallToolResult;
      expect(text(result)).toBe('modern stdio asked:amber');
      expect(asked).toEqual(['Which colour (modern stdio)?']);
    } finally {
      await client.close();
    }
  });

  it('is refused, naming why, while another call runs on the same pipe', async () => {
    const client = await caller('red');
    try {
      const waiting = execute(API_KEY, 'pipe_wait');
      // The waiting call is on the pipe once the upstream holds it; a short poll, bounded.
      for (let round = 0; round < 50; round++) {
        const result = (await client.callTool({ name: 'pipe_ask', arguments: {} })) as CallToolResult;
        if (text(result).includes('exactly one call')) break;
        if (round === 49) throw new Error(`never refused: ${text(result)}`);
      }
      expect(await execute(alice, 'pipe_release')).toMatchObject({ ok: true });
      expect(await waiting).toMatchObject({ ok: true, output: 'released' });
    } finally {
      await client.close();
    }
  });
});
