// subscriptions/listen (MCP 2026-07-28): a caller's open subscription hears notifications/tools/list_changed
// when its own pool changes — and another tenant's subscription hears nothing of it.
import type { Client } from '@modelcontextprotocol/client';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildTestApp, signToken, testConfig } from '../helpers/build.js';
import { connectModernClient } from '../helpers/mcp-modern.js';

let app: FastifyInstance;
let baseUrl: string;
const clients: Client[] = [];
// A small in-flight bound, so streams that kept their slot would soon leave no room for anything else.
const config = (acmeDeny: string[]) => testConfig({ server: { maxInFlight: 3 }, tenants: { acme: { tools: { allow: ['*'], deny: acmeDeny } }, globex: {} } });

beforeAll(async () => {
  app = await buildTestApp(config([]));
  baseUrl = await app.listen({ host: '127.0.0.1', port: 0 });
});
afterAll(async () => {
  await Promise.all(clients.map((client) => client.close()));
  await app?.close();
});

async function listening(tenant: string): Promise<{ client: Client; heard: string[] }> {
  const client = await connectModernClient(baseUrl, await signToken({ sub: `${tenant}-user`, tenant }));
  clients.push(client);
  const heard: string[] = [];
  client.setNotificationHandler('notifications/tools/list_changed', () => {
    heard.push('tools');
  });
  const subscription = await client.listen({ toolsListChanged: true });
  expect(subscription.honoredFilter).toMatchObject({ toolsListChanged: true });
  return { client, heard };
}

describe('subscriptions/listen', () => {
  it("announces the caller's own pool change, and nothing to another tenant", async () => {
    const acme = await listening('acme');
    const globex = await listening('globex');
    await app.gateway.reload(config(['write_note']));
    await vi.waitFor(() => expect(acme.heard).toEqual(['tools']), { timeout: 5000 });
    expect((await acme.client.listTools()).tools.map((tool) => tool.name)).not.toContain('write_note');
    // The same recheck ran for globex's stream: its pool did not change, so it heard nothing.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(globex.heard).toEqual([]);
  });

  it('holds no admission slot while the stream is open', async () => {
    const streams = [await listening('acme'), await listening('acme'), await listening('acme')];
    // With the two of the first test, five streams are open: over maxInFlight (3), and calls still get in.
    for (const { client } of streams) expect((await client.callTool({ name: 'get_weather', arguments: { city: 'Oslo' } })).isError).toBe(false);
  });
});
