// MCP 2026-07-28 on toolgate's own endpoint: the SDK v2 client negotiates the modern era by itself and
// lists, calls, reads and gets statelessly (no session id is ever issued), against the real
// server-everything behind the gateway; another tenant's tool, resource and prompt answer exactly as
// unknown ones do in this era too; and the spec's checks of a modern request answer with its errors.
import type { Client } from '@modelcontextprotocol/client';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEverythingHttp, type SpawnedServer } from '../../fixtures/mcp/spawn-everything.js';
import { buildTestApp, signToken, testConfig } from '../../helpers/build.js';
import { connectModernClient, MODERN_VERSION, modernPost, TASKS_EXTENSION } from '../../helpers/mcp-modern.js';

let everything: SpawnedServer;
let app: FastifyInstance;
let baseUrl: string;
let acmeToken: string;
let globexToken: string;
const clients: Client[] = [];

const ARCHITECTURE = 'toolgate://global/everything/demo://resource/static/document/architecture.md';

beforeAll(async () => {
  everything = await startEverythingHttp();
  app = await buildTestApp(
    testConfig({
      mcp: { global: [{ id: 'everything', transport: 'streamable-http', url: everything.url, required: true }] },
      tenants: { acme: { mcpServices: ['everything'], toolsets: { weather: { tools: ['get_weather'] } } }, globex: {} },
    }),
  );
  baseUrl = await app.listen({ host: '127.0.0.1', port: 0 });
  acmeToken = await signToken({ sub: 'alice', tenant: 'acme' });
  globexToken = await signToken({ sub: 'bob', tenant: 'globex' });
}, 30_000);

afterAll(async () => {
  await Promise.all(clients.map((client) => client.close()));
  await app?.close();
  await everything?.kill();
});

async function modernClient(token: string, path?: string): Promise<Client> {
  const client = await connectModernClient(baseUrl, token, path);
  clients.push(client);
  return client;
}

describe('the SDK v2 client against /mcp', () => {
  it('negotiates 2026-07-28 and lists, calls, reads a resource and gets a prompt', async () => {
    const client = await modernClient(acmeToken);
    expect(client.getNegotiatedProtocolVersion()).toBe(MODERN_VERSION);
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(expect.arrayContaining(['echo', 'get_weather']));
    expect(await client.callTool({ name: 'echo', arguments: { message: 'modern' } })).toMatchObject({ content: [{ type: 'text', text: 'Echo: modern' }], isError: false });
    expect(await client.callTool({ name: 'get_weather', arguments: { city: 'Oslo' } })).toMatchObject({ content: [{ type: 'text', text: '{"city":"Oslo","tempC":21}' }] });
    const read = await client.readResource({ uri: ARCHITECTURE });
    expect(read.contents[0]).toMatchObject({ uri: ARCHITECTURE, mimeType: 'text/markdown' });
    const prompt = await client.getPrompt({ name: 'global/everything/args-prompt', arguments: { city: 'Oslo' } });
    expect(JSON.stringify(prompt.messages)).toContain('Oslo');
  });

  it("reads both eras' revisions in server/discover and still negotiates the modern one", async () => {
    const client = await modernClient(acmeToken);
    expect(client.getProtocolEra()).toBe('modern');
    expect(client.getNegotiatedProtocolVersion()).toBe(MODERN_VERSION);
    expect(client.getDiscoverResult()?.supportedVersions).toEqual([MODERN_VERSION, '2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05', '2024-10-07']);
    // An explicit discover on the connection answers the same, on a toolset too.
    expect((await client.discover()).supportedVersions).toContain('2025-11-25');
    const narrowed = await modernClient(acmeToken, '/mcp/weather');
    expect(narrowed.getDiscoverResult()?.supportedVersions).toContain('2025-11-25');
    expect(narrowed.getNegotiatedProtocolVersion()).toBe(MODERN_VERSION);
  });

  it('serves /mcp/<toolset> narrowed to the toolset in the modern era too', async () => {
    const client = await modernClient(acmeToken, '/mcp/weather');
    expect(client.getNegotiatedProtocolVersion()).toBe(MODERN_VERSION);
    expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['get_weather']);
    const outside = await client.callTool({ name: 'echo', arguments: { message: 'x' } });
    expect(outside.isError).toBe(true);
  });
});

describe('a modern request on the wire', () => {
  it('server/discover answers the modern revision, capabilities with the Tasks extension and server info, and no session', async () => {
    const answer = await modernPost(baseUrl, acmeToken, 'server/discover');
    expect(answer.status).toBe(200);
    expect(answer.headers.get('mcp-session-id')).toBeNull();
    expect(answer.headers.get('x-request-id')).toBeTruthy();
    expect(answer.body.result).toMatchObject({
      // The modern revision first, then the legacy ones this endpoint negotiates at initialize.
      supportedVersions: [MODERN_VERSION, '2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05', '2024-10-07'],
      capabilities: { tools: { listChanged: true }, resources: {}, prompts: {}, extensions: { [TASKS_EXTENSION]: {} } },
      resultType: 'complete',
      _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'toolgate' } },
    });
  });

  it('answers a tools/call with resultType and no session, on a plain POST', async () => {
    const answer = await modernPost(baseUrl, acmeToken, 'tools/call', { name: 'echo', arguments: { message: 'wire' } });
    expect(answer.headers.get('mcp-session-id')).toBeNull();
    expect(answer.body.result).toMatchObject({ resultType: 'complete', isError: false, content: [{ type: 'text', text: 'Echo: wire' }] });
  });

  it('refuses headers that disagree with the body with the spec errors', async () => {
    const method = await modernPost(baseUrl, acmeToken, 'tools/list', {}, { headers: { 'mcp-method': 'prompts/list' } });
    expect(method.status).toBe(400);
    expect(method.body.error?.code).toBe(-32020);
    const name = await modernPost(baseUrl, acmeToken, 'tools/call', { name: 'echo', arguments: { message: 'x' } }, { headers: { 'mcp-name': 'get_weather' } });
    expect(name.status).toBe(400);
    expect(name.body.error?.code).toBe(-32020);
    const noName = await modernPost(baseUrl, acmeToken, 'tools/call', { name: 'echo', arguments: { message: 'x' } }, { headers: { 'mcp-name': '' } });
    expect(noName.status).toBe(400);
  });

  it('refuses a modern request without the envelope keys the spec requires, and an unknown modern revision', async () => {
    const missing = await modernPost(baseUrl, acmeToken, 'tools/list', {}, { omitMeta: ['io.modelcontextprotocol/clientCapabilities'] });
    expect(missing.status).toBe(400);
    expect(missing.body.error?.code).toBe(-32602);
    const unknown = await fetch(`${baseUrl}/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${acmeToken}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2099-01-01', 'mcp-method': 'tools/list' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: { 'io.modelcontextprotocol/protocolVersion': '2099-01-01', 'io.modelcontextprotocol/clientCapabilities': {} } } }),
    });
    const body = (await unknown.json()) as { error?: { code: number; data?: { supported?: string[] } } };
    expect(body.error?.code).toBe(-32022);
    expect(JSON.stringify(body.error?.data)).toContain(MODERN_VERSION);
  });

  it('has no tasks/result or tasks/list, as the Tasks extension (SEP-2663) has none, even for a client that declared it', async () => {
    const declared = { extensions: { [TASKS_EXTENSION]: {} } };
    for (const method of ['tasks/result', 'tasks/list']) {
      const params = method === 'tasks/result' ? { taskId: 'task-nobody-issued' } : {};
      const answer = await modernPost(baseUrl, acmeToken, method, params, { capabilities: declared, headers: method === 'tasks/result' ? { 'mcp-name': 'task-nobody-issued' } : {} });
      expect(answer.body.error?.code, method).toBe(-32601);
    }
  });

  it('needs authentication as every other request does', async () => {
    const answer = await fetch(`${baseUrl}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', 'mcp-protocol-version': MODERN_VERSION }, body: '{}' });
    expect(answer.status).toBe(401);
  });
});

describe('no cross-tenant oracle in the modern era', () => {
  /** The answer with the asked name blanked out and the per-call ids removed. */
  const shape = (body: unknown, name: string): string =>
    JSON.stringify(body)
      .replaceAll(name, '<name>')
      .replace(/call_[0-9a-f-]{36}/g, '<callId>');

  it("answers another tenant's tool exactly as an unknown one", async () => {
    const foreign = await modernPost(baseUrl, globexToken, 'tools/call', { name: 'echo', arguments: { message: 'x' } });
    const unknown = await modernPost(baseUrl, globexToken, 'tools/call', { name: 'no_such_tool', arguments: { message: 'x' } });
    expect(foreign.status).toBe(unknown.status);
    expect(shape(foreign.body, 'echo')).toBe(shape(unknown.body, 'no_such_tool'));
    expect(JSON.stringify(foreign.body)).toContain('UNKNOWN_TOOL');
  });

  it("answers another tenant's resource and prompt exactly as unknown ones", async () => {
    const unknownUri = 'toolgate://global/everything/demo://resource/static/document/no-such.md';
    const foreign = await modernPost(baseUrl, globexToken, 'resources/read', { uri: ARCHITECTURE });
    const unknown = await modernPost(baseUrl, globexToken, 'resources/read', { uri: unknownUri });
    expect(foreign.status).toBe(unknown.status);
    // The 2026-07-28 wire carries "resource not found" as -32602 (the legacy era's -32002).
    expect(foreign.body.error?.code).toBe(-32602);
    expect(shape(foreign.body, ARCHITECTURE)).toBe(shape(unknown.body, unknownUri));

    const foreignPrompt = await modernPost(baseUrl, globexToken, 'prompts/get', { name: 'global/everything/simple-prompt' });
    const unknownPrompt = await modernPost(baseUrl, globexToken, 'prompts/get', { name: 'global/everything/no-such-prompt' });
    expect(foreignPrompt.body.error?.code).toBe(-32602);
    expect(shape(foreignPrompt.body, 'global/everything/simple-prompt')).toBe(shape(unknownPrompt.body, 'global/everything/no-such-prompt'));
  });

  it("lists none of another tenant's tools, resources or prompts", async () => {
    const client = await modernClient(globexToken);
    expect((await client.listTools()).tools.map((tool) => tool.name)).not.toContain('echo');
    expect((await client.listResources()).resources).toEqual([]);
    expect((await client.listPrompts()).prompts).toEqual([]);
  });
});
