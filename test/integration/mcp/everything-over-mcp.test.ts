// The real server-everything (npm) behind a real gateway listener, seen by the SDK's own Client over
// streamable HTTP: content passthrough, resources and prompts.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEverythingHttp, type SpawnedServer } from '../../fixtures/mcp/spawn-everything.js';
import { bearer, buildTestApp, signToken, testConfig } from '../../helpers/build.js';

let everything: SpawnedServer;
let app: FastifyInstance;
let baseUrl: string;
let acmeToken: string;
let globexToken: string;
const clients: Client[] = [];

const gatewayConfig = (tools: Record<string, unknown> = {}) =>
  testConfig({
    mcp: { global: [{ id: 'everything', transport: 'streamable-http', url: everything.url, required: true }] },
    tools,
    tenants: { acme: { mcpServices: ['everything'] }, globex: {} },
  });

beforeAll(async () => {
  everything = await startEverythingHttp();
  app = await buildTestApp(gatewayConfig());
  baseUrl = await app.listen({ host: '127.0.0.1', port: 0 });
  acmeToken = await signToken({ sub: 'alice', tenant: 'acme' });
  globexToken = await signToken({ sub: 'bob', tenant: 'globex' });
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
