// MCP sessions on toolgate's own endpoint, seen by the SDK's Client over real HTTP: a session id from
// initialize, the GET notification stream, ownership of a session, DELETE, and notifications/cancelled.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { GatewayConfig } from '../../src/config/types.js';
import { createTestState, echoTool, failTool, notifyToolsChanged, sleepTool, startHttpTestServer, type HttpTestServer, type TestServerState } from '../fixtures/mcp/test-server.js';
import { expectCancelledUpstream } from '../helpers/mcp-cancel.js';
import { bearer, buildTestApp, scrapeMetrics, signToken, testConfig } from '../helpers/build.js';

let app: FastifyInstance;
let upstream: HttpTestServer;
let upstreamState: TestServerState;
let baseUrl: string;
let aliceToken: string;
let bobToken: string;
let globexToken: string;
let liveConfig: GatewayConfig;

const addedTool = { name: 'added_by_reload', description: 'Appears after a reload', http: { method: 'POST', url: 'http://127.0.0.1:9/never' } };
const configWith = (functions: unknown[], mcpServer: Record<string, unknown> = {}): GatewayConfig =>
  testConfig({
    functions: [{ module: './test/fixtures/functions/basic.mjs' }, ...functions],
    mcp: { local: [{ service: 'prog', module: './test/fixtures/mcp/progress-module.mjs' }], global: [{ id: 'ev', transport: 'streamable-http', url: upstream.url, prefix: true }] },
    tenants: { acme: { mcpServices: ['ev'], toolsets: { echoes: { tools: ['ev_*'] } } }, globex: {} },
    mcpServer: { maxPerPrincipal: 3, ...mcpServer },
  });

beforeAll(async () => {
  upstreamState = createTestState([echoTool, sleepTool]);
  upstream = await startHttpTestServer(upstreamState);
  liveConfig = configWith([]);
  app = await buildTestApp(liveConfig, { loadConfig: async () => liveConfig });
  baseUrl = await app.listen({ host: '127.0.0.1', port: 0 });
  aliceToken = await signToken({ sub: 'alice' });
  bobToken = await signToken({ sub: 'bob' });
  globexToken = await signToken({ sub: 'alice', tenant: 'globex' });
});
afterAll(async () => {
  await app.close();
  await upstream.close();
});

interface Connected {
  client: Client;
  transport: StreamableHTTPClientTransport;
  /** Resolves with the status of the client's GET (the notification stream), once it answered. */
  stream: Promise<number>;
}

async function connect(token: string, path = '/mcp', base = baseUrl): Promise<Connected> {
  let opened!: (status: number) => void;
  const stream = new Promise<number>((resolve) => (opened = resolve));
  const transport = new StreamableHTTPClientTransport(new URL(`${base}${path}`), {
    requestInit: { headers: bearer(token) },
    // The SDK client opens the GET stream by itself after initialize; this tells the test when it answered.
    fetch: async (url, init) => {
      const response = await fetch(url, init);
      if (init?.method === 'GET') opened(response.status);
      return response;
    },
  });
  const client = new Client({ name: 'session-test', version: '1.0.0' });
  await client.connect(transport);
  return { client, transport, stream };
}

const rawMcp = (token: string, sessionId: string, method: 'POST' | 'GET' | 'DELETE' = 'POST', path = '/mcp'): Promise<Response> =>
  fetch(`${baseUrl}${path}`, {
    method,
    headers: { ...bearer(token), 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-06-18', 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    ...(method === 'POST' ? { body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }) } : {}),
  });

describe('MCP sessions with the SDK client', () => {
  it('issues a session id, opens the GET stream and announces tools/list_changed after a reload that adds a tool', async () => {
    const { client, transport, stream } = await connect(aliceToken);
    try {
      expect(transport.sessionId).toMatch(/^[A-Za-z0-9_-]{32}$/);
      expect(await stream).toBe(200);
      const before = (await client.listTools()).tools.map((tool) => tool.name);
      expect(before).not.toContain('added_by_reload');
      let announced = 0;
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
        announced += 1;
      });
      liveConfig = configWith([addedTool]);
      await app.reloadConfig();
      await vi.waitFor(() => expect(announced).toBe(1), { timeout: 2000, interval: 20 });
      expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('added_by_reload');
    } finally {
      liveConfig = configWith([]);
      await app.reloadConfig();
      await client.close();
    }
  });

  it("announces tools/list_changed when an upstream's own tool list changes", async () => {
    const { client, stream } = await connect(aliceToken);
    try {
      expect(await stream).toBe(200);
      let announced = 0;
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
        announced += 1;
      });
      upstreamState.tools.push(failTool);
      await notifyToolsChanged(upstreamState);
      await vi.waitFor(() => expect(announced).toBeGreaterThanOrEqual(1), { timeout: 5000, interval: 20 });
      expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('ev_fail');
    } finally {
      upstreamState.tools.splice(upstreamState.tools.indexOf(failTool), 1);
      await notifyToolsChanged(upstreamState);
      await client.close();
    }
  });

  it('refuses the same session id with another user\'s or another tenant\'s token exactly like an unknown one (404)', async () => {
    const { client, transport } = await connect(aliceToken);
    try {
      const id = transport.sessionId!;
      expect((await rawMcp(aliceToken, id)).status).toBe(200);
      const unknown = await rawMcp(aliceToken, 'A'.repeat(32));
      const unknownBody = await unknown.text();
      expect(unknown.status).toBe(404);
      for (const token of [bobToken, globexToken]) {
        for (const method of ['POST', 'GET', 'DELETE'] as const) {
          const foreign = await rawMcp(token, id, method);
          expect(foreign.status).toBe(404);
          expect(await foreign.text()).toBe(unknownBody);
        }
      }
      // Bob's refused DELETE ended nothing: the session still serves Alice.
      expect((await client.listTools()).tools.length).toBeGreaterThan(0);
    } finally {
      await client.close();
    }
  });

  it('ends a session with DELETE: its id answers 404 afterwards', async () => {
    const { client, transport } = await connect(aliceToken);
    const id = transport.sessionId!;
    await transport.terminateSession();
    expect((await rawMcp(aliceToken, id)).status).toBe(404);
    await client.close();
  });

  it('counts sessions started per tenant and the streams open on this replica in /metrics', async () => {
    const sample = async (pattern: RegExp): Promise<number> => Number(pattern.exec(await scrapeMetrics(app))?.[1] ?? 'NaN');
    const started = await sample(/^toolgate_mcp_sessions_started_total\{tenant="acme"\} (\d+)$/m);
    const { client, transport, stream } = await connect(aliceToken);
    expect(await stream).toBe(200);
    expect(await sample(/^toolgate_mcp_sessions_started_total\{tenant="acme"\} (\d+)$/m)).toBe((Number.isNaN(started) ? 0 : started) + 1);
    await expect.poll(() => sample(/^toolgate_mcp_streams_open (\d+)$/m), { timeout: 5_000 }).toBeGreaterThanOrEqual(1);
    const open = await sample(/^toolgate_mcp_streams_open (\d+)$/m);
    await transport.terminateSession();
    await client.close();
    await expect.poll(() => sample(/^toolgate_mcp_streams_open (\d+)$/m), { timeout: 5_000 }).toBe(open - 1);
  });

  it('replaces the older stream of a session that reconnects (the newer GET answers 200, the older stream ends)', async () => {
    const { client, transport, stream } = await connect(aliceToken);
    expect(await stream).toBe(200);
    const id = transport.sessionId!;
    // The SDK client closes; its GET may still look open here when it reconnects at once.
    await client.close();
    const first = await rawMcp(aliceToken, id, 'GET');
    expect(first.status).toBe(200);
    const second = await rawMcp(aliceToken, id, 'GET');
    expect(second.status).toBe(200);
    // The first stream ends (done) instead of waiting for an event; bounded by the test's own timeout.
    const reader = first.body!.getReader();
    let ended = false;
    for (let i = 0; i < 100 && !ended; i += 1) ended = (await reader.read()).done;
    expect(ended).toBe(true);
    // The newer one is the session's stream: DELETE ends it.
    expect((await rawMcp(aliceToken, id, 'DELETE')).status).toBe(204);
    const newer = second.body!.getReader();
    ended = false;
    for (let i = 0; i < 100 && !ended; i += 1) ended = (await newer.read()).done;
    expect(ended).toBe(true);
  });

  it('serves a session only at the endpoint that created it (a toolset session is unknown at /mcp)', async () => {
    const { client, transport } = await connect(aliceToken, '/mcp/echoes');
    try {
      expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['ev_echo', 'ev_sleep']);
      expect((await rawMcp(aliceToken, transport.sessionId!, 'POST', '/mcp/echoes')).status).toBe(200);
      expect((await rawMcp(aliceToken, transport.sessionId!, 'POST', '/mcp')).status).toBe(404);
    } finally {
      await client.close();
    }
  });

  it('cancels an in-flight call upstream on notifications/cancelled', async () => {
    const { client } = await connect(aliceToken);
    try {
      await expectCancelledUpstream(client, upstreamState);
    } finally {
      await client.close();
    }
  });

  it("keeps at most maxPerPrincipal sessions per principal by ending that principal's oldest", async () => {
    const clients = [];
    for (let i = 0; i < 4; i += 1) clients.push(await connect(aliceToken));
    try {
      const [oldest, ...rest] = clients.map(({ transport }) => transport.sessionId!);
      expect((await rawMcp(aliceToken, oldest!)).status).toBe(404);
      for (const id of rest) expect((await rawMcp(aliceToken, id)).status).toBe(200);
    } finally {
      await Promise.all(clients.map(({ client }) => client.close()));
    }
  });

  it('still serves a POST without a session id statelessly, and asks a GET for one', async () => {
    const res = await fetch(`${baseUrl}/mcp`, {
      method: 'POST',
      headers: { ...bearer(aliceToken), 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('mcp-session-id')).toBeNull();
    expect((await fetch(`${baseUrl}/mcp`, { headers: bearer(aliceToken) })).status).toBe(400);
  });
});

describe('progress', () => {
  it("relays an upstream's notifications/progress to the client that sent a progressToken, before the result", async () => {
    const { client } = await connect(aliceToken);
    try {
      const updates: unknown[] = [];
      const result = await client.callTool({ name: 'prog_count', arguments: { to: 3 } }, undefined, { onprogress: (update) => void updates.push(update) });
      expect(result).toMatchObject({ content: [{ type: 'text', text: 'counted to 3' }], isError: false });
      expect(updates).toEqual([1, 2, 3].map((step) => ({ progress: step, total: 3, message: `step ${step}` })));
      // Without a token nothing is asked of the upstream, and the answer is one JSON body as before.
      expect(await client.callTool({ name: 'prog_count', arguments: { to: 2 } })).toMatchObject({ content: [{ type: 'text', text: 'counted to 2' }] });
    } finally {
      await client.close();
    }
  });
});

describe('a GET stream and admission', () => {
  it('holds no admission slot while open: a replica and a tenant with one slot each still run calls', async () => {
    const limited = await buildTestApp(testConfig({ server: { maxInFlight: 1 }, tenants: { acme: { limits: { maxInFlight: 1 } } } }));
    const url = await limited.listen({ host: '127.0.0.1', port: 0 });
    const { client, stream } = await connect(aliceToken, '/mcp', url);
    try {
      expect(await stream).toBe(200);
      expect(await client.callTool({ name: 'get_weather', arguments: { city: 'Oslo' } })).toMatchObject({ isError: false });
      expect(await client.callTool({ name: 'get_weather', arguments: { city: 'Rome' } })).toMatchObject({ isError: false });
    } finally {
      await client.close();
      await limited.close();
    }
  });
});

describe('mcpServer.sessions: false', () => {
  it('answers initialize without a session id and GET/DELETE with 405', async () => {
    const stateless = await buildTestApp(testConfig({ mcpServer: { sessions: false } }));
    const url = await stateless.listen({ host: '127.0.0.1', port: 0 });
    const transport = new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers: bearer(aliceToken) } });
    const client = new Client({ name: 'stateless-test', version: '1.0.0' });
    try {
      await client.connect(transport);
      expect(transport.sessionId).toBeUndefined();
      expect((await client.listTools()).tools.length).toBeGreaterThan(0);
      for (const method of ['GET', 'DELETE']) {
        const res = await fetch(`${url}/mcp`, { method, headers: { ...bearer(aliceToken), 'mcp-session-id': 'A'.repeat(32) } });
        expect(res.status).toBe(405);
        expect(res.headers.get('allow')).toBe('POST');
      }
    } finally {
      await client.close();
      await stateless.close();
    }
  });
});
