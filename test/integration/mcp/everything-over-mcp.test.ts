// The real server-everything (npm) behind a real gateway listener, seen by the SDK's own Client over
// streamable HTTP: content passthrough, resources and prompts.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FastifyInstance } from 'fastify';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEverythingHttp, type SpawnedServer } from '../../fixtures/mcp/spawn-everything.js';
import { bearer, buildTestApp, signToken, testConfig } from '../../helpers/build.js';

let everything: SpawnedServer;
let app: FastifyInstance;
let baseUrl: string;
let acmeToken: string;
let globexToken: string;
let initechToken: string;
const clients: Client[] = [];

const gatewayConfig = (tools: Record<string, unknown> = {}) =>
  testConfig({
    mcp: { global: [{ id: 'everything', transport: 'streamable-http', url: everything.url, required: true }] },
    tools,
    // Users may register a loopback server of their own (the real server-everything) in these tests.
    egress: { allow: ['127.0.0.1'] },
    tenants: {
      acme: { mcpServices: ['everything'] },
      globex: {},
      // Reaches the service, narrowed by its own globs and a small read cap.
      initech: {
        mcpServices: ['everything'],
        resources: { deny: ['*architecture*'], maxReadChars: 40 },
        prompts: { allow: ['global/everything/simple-*'] },
      },
    },
  });

beforeAll(async () => {
  everything = await startEverythingHttp();
  app = await buildTestApp(gatewayConfig());
  baseUrl = await app.listen({ host: '127.0.0.1', port: 0 });
  acmeToken = await signToken({ sub: 'alice', tenant: 'acme' });
  globexToken = await signToken({ sub: 'bob', tenant: 'globex' });
  initechToken = await signToken({ sub: 'carol', tenant: 'initech' });
}, 30_000);

afterAll(async () => {
  await Promise.all(clients.map((client) => client.close()));
  await app?.close();
  await everything?.kill();
});

async function mcpClient(token: string): Promise<Client> {
  const client = new Client({ name: 'test-agent', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp`), { requestInit: { headers: bearer(token) } }));
  clients.push(client);
  return client;
}

/** What server-everything itself answers, asked directly (the reference for "as the upstream sent it"). */
async function direct(): Promise<Client> {
  const client = new Client({ name: 'reference', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(everything.url)));
  clients.push(client);
  return client;
}

describe('content passthrough over /mcp', () => {
  it("returns get-tiny-image's image block with the upstream's bytes, between its text blocks", async () => {
    const upstream = await (await direct()).callTool({ name: 'get-tiny-image', arguments: {} });
    const upstreamImage = (upstream.content as Array<{ type: string; data?: string }>).find((block) => block.type === 'image');
    expect(upstreamImage?.data?.length).toBeGreaterThan(1000);

    const result = await (await mcpClient(acmeToken)).callTool({ name: 'get-tiny-image', arguments: {} });
    expect(result.isError).toBe(false);
    const content = result.content as Array<{ type: string; data?: string; mimeType?: string; text?: string }>;
    expect(content.map((block) => block.type)).toEqual(['text', 'image', 'text']);
    expect(content[1]).toEqual({ type: 'image', mimeType: 'image/png', data: upstreamImage!.data });
    expect(Buffer.from(content[1]!.data!, 'base64').equals(Buffer.from(upstreamImage!.data!, 'base64'))).toBe(true);
  });

  it('lists the outputSchema of get-structured-content and passes its structuredContent through', async () => {
    const client = await mcpClient(acmeToken);
    const { tools } = await client.listTools();
    const listed = tools.find((tool) => tool.name === 'get-structured-content');
    expect(listed?.outputSchema).toMatchObject({ type: 'object', properties: { temperature: { type: 'number' } } });
    // The SDK client validates structuredContent against the listed outputSchema: a bad one would throw here.
    const result = await client.callTool({ name: 'get-structured-content', arguments: { location: 'Chicago' } });
    expect(result.structuredContent).toEqual({ temperature: 36, conditions: 'Light rain / drizzle', humidity: 82 });
    expect(result.content).toEqual([{ type: 'text', text: JSON.stringify(result.structuredContent) }]);
  });

  it('keeps the REST contract: one string output, the image whole in trace only', async () => {
    const response = await app.inject({ method: 'POST', url: '/v1/execute', headers: bearer(acmeToken), payload: { name: 'get-tiny-image', arguments: {} } });
    const body = response.json<{ ok: boolean; output: string; trace: { content: Array<{ type: string; data?: string }> } }>();
    expect(body.ok).toBe(true);
    expect(body.output).toMatch(/^Here's the image you requested:\n\[image image\/png \d+ bytes\]\nThe image above is the MCP logo\.$/);
    expect(body.trace.content[1]).toMatchObject({ type: 'image', mimeType: 'image/png' });
  });

  it('sends the cut output, not the blocks, when the content is over the tool\'s maxResultChars', async () => {
    await app.gateway.reload(gatewayConfig({ 'get-tiny-image': { maxResultChars: 60 } }));
    try {
      const result = await (await mcpClient(acmeToken)).callTool({ name: 'get-tiny-image', arguments: {} });
      expect(result.content).toEqual([{ type: 'text', text: expect.stringMatching(/…\[truncated \d+ chars\]$/) }]);
    } finally {
      await app.gateway.reload(gatewayConfig());
    }
  });
});

const ARCHITECTURE = 'demo://resource/static/document/architecture.md';
const namespaced = (uri: string): string => `toolgate://global/everything/${uri}`;

/** The JSON-RPC error a request ends with (code and message), or a failure when it succeeds. */
async function rpcError(work: Promise<unknown>): Promise<{ code: number; message: string }> {
  const error = await work.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(McpError);
  return { code: (error as McpError).code, message: (error as McpError).message };
}

describe('resources over /mcp', () => {
  it("lists server-everything's resources, namespaced, to a tenant that may reach it and none to one that may not", async () => {
    const upstream = (await (await direct()).listResources()).resources;
    expect(upstream.length).toBeGreaterThan(0);
    const { resources } = await (await mcpClient(acmeToken)).listResources();
    expect(resources.map((resource) => resource.uri)).toEqual(upstream.map((resource) => namespaced(resource.uri)));
    expect(resources.find((resource) => resource.uri === namespaced(ARCHITECTURE))).toMatchObject({ name: 'global/everything/architecture.md', mimeType: 'text/markdown' });

    const globex = await mcpClient(globexToken);
    expect((await globex.listResources()).resources).toEqual([]);
    expect((await globex.listResourceTemplates()).resourceTemplates).toEqual([]);
    expect((await globex.listPrompts()).prompts).toEqual([]);
  });

  it("reads a resource from its owning service, as the upstream answers it, under the namespaced URI", async () => {
    const upstream = await (await direct()).readResource({ uri: ARCHITECTURE });
    const read = await (await mcpClient(acmeToken)).readResource({ uri: namespaced(ARCHITECTURE) });
    expect(read.contents).toEqual(upstream.contents.map((contents) => ({ ...contents, uri: namespaced(contents.uri) })));
  });

  it('refuses a read across tenants exactly as a URI nobody has, over MCP and REST', async () => {
    const globex = await mcpClient(globexToken);
    const crossTenant = await rpcError(globex.readResource({ uri: namespaced(ARCHITECTURE) }));
    const unknown = await rpcError(globex.readResource({ uri: 'toolgate://global/nosuch/demo://resource/static/document/architecture.md' }));
    const garbage = await rpcError(globex.readResource({ uri: ARCHITECTURE }));
    for (const answer of [crossTenant, unknown, garbage]) expect(answer.code).toBe(-32002);
    expect(crossTenant.message).toBe(`MCP error -32002: unknown resource: ${namespaced(ARCHITECTURE)}`);
    expect(unknown.message.replace('nosuch', 'everything')).toBe(crossTenant.message);

    const rest = async (uri: string) => {
      const response = await app.inject({ url: `/v1/resources/read?uri=${encodeURIComponent(uri)}`, headers: bearer(globexToken) });
      return { status: response.statusCode, body: response.json<{ code: string; message: string }>() };
    };
    const restCross = await rest(namespaced(ARCHITECTURE));
    const restUnknown = await rest('toolgate://global/nosuch/demo://resource/static/document/architecture.md');
    expect(restCross).toEqual({ status: 404, body: expect.objectContaining({ code: 'TG_NOT_FOUND', message: `unknown resource: ${namespaced(ARCHITECTURE)}` }) });
    expect({ ...restUnknown, body: { ...restUnknown.body, message: restUnknown.body.message.replace('nosuch', 'everything') } }).toEqual(restCross);
  });

  it('lists templates under the namespace and reads a URI filled in from one', async () => {
    const client = await mcpClient(acmeToken);
    const { resourceTemplates } = await client.listResourceTemplates();
    const text = resourceTemplates.find((template) => template.uriTemplate === namespaced('demo://resource/dynamic/text/{resourceId}'));
    expect(text).toMatchObject({ name: 'global/everything/Dynamic Text Resource' });
    const read = await client.readResource({ uri: namespaced('demo://resource/dynamic/text/7') });
    expect(read.contents).toEqual([{ uri: namespaced('demo://resource/dynamic/text/7'), mimeType: 'text/plain', text: expect.stringMatching(/^Resource 7: /) }]);
  });

  it("narrows by the tenant's resources and prompts globs (a denied URI reads as unknown) and caps a read", async () => {
    const client = await mcpClient(initechToken);
    const uris = (await client.listResources()).resources.map((resource) => resource.uri);
    expect(uris.length).toBeGreaterThan(0);
    expect(uris).not.toContain(namespaced(ARCHITECTURE));
    expect(await rpcError(client.readResource({ uri: namespaced(ARCHITECTURE) }))).toEqual({ code: -32002, message: `MCP error -32002: unknown resource: ${namespaced(ARCHITECTURE)}` });
    expect((await client.listPrompts()).prompts.map((prompt) => prompt.name)).toEqual(['global/everything/simple-prompt']);
    expect((await rpcError(client.getPrompt({ name: 'global/everything/args-prompt', arguments: { city: 'Oslo' } }))).message).toMatch(/unknown prompt: global\/everything\/args-prompt$/);

    const read = await client.readResource({ uri: uris[0]! });
    const [contents] = read.contents as Array<{ text: string }>;
    expect(contents!.text).toMatch(/^[\s\S]{40}…\[truncated \d+ chars\]$/);
    expect(read._meta).toEqual({ 'toolgate/truncated': true });
  });
});

describe('prompts over /mcp', () => {
  it("lists server-everything's prompts namespaced and gets one, with embedded resources under the namespace", async () => {
    const client = await mcpClient(acmeToken);
    const names = (await client.listPrompts()).prompts.map((prompt) => prompt.name);
    expect(names).toEqual(expect.arrayContaining(['global/everything/simple-prompt', 'global/everything/resource-prompt']));
    expect((await client.getPrompt({ name: 'global/everything/simple-prompt' })).messages).toEqual([
      { role: 'user', content: { type: 'text', text: 'This is a simple prompt without arguments.' } },
    ]);
    const withResource = await client.getPrompt({ name: 'global/everything/resource-prompt', arguments: { resourceType: 'Text', resourceId: '3' } });
    expect(withResource.messages[1]?.content).toMatchObject({ type: 'resource', resource: { uri: namespaced('demo://resource/dynamic/text/3') } });
  });
});

describe('resources and prompts over REST', () => {
  it('lists, reads and gets what the MCP endpoint does', async () => {
    const headers = bearer(acmeToken);
    const listing = (await app.inject({ url: '/v1/resources', headers })).json<{ resources: Array<{ uri: string }>; resourceTemplates: Array<{ uriTemplate: string }> }>();
    expect(listing.resources.map((resource) => resource.uri)).toContain(namespaced(ARCHITECTURE));
    expect(listing.resourceTemplates.map((template) => template.uriTemplate)).toContain(namespaced('demo://resource/dynamic/blob/{resourceId}'));

    const read = await app.inject({ url: `/v1/resources/read?uri=${encodeURIComponent(namespaced('demo://resource/dynamic/blob/2'))}`, headers });
    expect(read.statusCode).toBe(200);
    const [blob] = read.json<{ contents: Array<{ uri: string; blob: string }> }>().contents;
    expect(blob?.uri).toBe(namespaced('demo://resource/dynamic/blob/2'));
    expect(Buffer.from(blob!.blob, 'base64').toString()).toMatch(/^Resource 2: /);

    const prompts = (await app.inject({ url: '/v1/prompts', headers })).json<{ prompts: Array<{ name: string }> }>();
    expect(prompts.prompts.map((prompt) => prompt.name)).toContain('global/everything/args-prompt');
    const got = await app.inject({ method: 'POST', url: '/v1/prompts/get', headers, payload: { name: 'global/everything/args-prompt', arguments: { city: 'Oslo' } } });
    expect(got.statusCode).toBe(200);
    expect(JSON.stringify(got.json())).toContain('Oslo');
    const unknown = await app.inject({ method: 'POST', url: '/v1/prompts/get', headers: bearer(globexToken), payload: { name: 'global/everything/args-prompt' } });
    expect(unknown.json()).toMatchObject({ statusCode: 404, code: 'TG_NOT_FOUND', message: 'unknown prompt: global/everything/args-prompt' });
  });
});

describe("a user's own MCP servers", () => {
  it('lists and reads them for their owner only, under user/<serviceId>; another user of the tenant gets unknown', async () => {
    const alice = await signToken({ sub: 'alice', tenant: 'acme' });
    const dave = await signToken({ sub: 'dave', tenant: 'acme' });
    const put = await app.inject({ method: 'PUT', url: '/v1/users/alice/mcp-servers/notes', headers: bearer(alice), payload: { url: everything.url } });
    expect(put.statusCode).toBeLessThan(300);
    const own = `toolgate://user/notes/${ARCHITECTURE}`;
    try {
      const aliceClient = await mcpClient(alice);
      expect((await aliceClient.listResources()).resources.map((resource) => resource.uri)).toEqual(expect.arrayContaining([own, namespaced(ARCHITECTURE)]));
      expect((await aliceClient.readResource({ uri: own })).contents[0]).toMatchObject({ uri: own, mimeType: 'text/markdown' });
      expect((await aliceClient.listPrompts()).prompts.map((prompt) => prompt.name)).toContain('user/notes/simple-prompt');

      const daveClient = await mcpClient(dave);
      expect((await daveClient.listResources()).resources.map((resource) => resource.uri).filter((uri) => uri.startsWith('toolgate://user/'))).toEqual([]);
      expect(await rpcError(daveClient.readResource({ uri: own }))).toEqual({ code: -32002, message: `MCP error -32002: unknown resource: ${own}` });
      expect((await rpcError(daveClient.getPrompt({ name: 'user/notes/simple-prompt' }))).message).toBe('MCP error -32602: unknown prompt: user/notes/simple-prompt');
    } finally {
      await app.inject({ method: 'DELETE', url: '/v1/users/alice/mcp-servers/notes', headers: bearer(alice) });
    }
  });
});
