// MCP sessions across two real gateway processes (the built dist/src/server.js) sharing one Redis: a session
// made on one replica serves on the other, and what one replica must tell the other (cancel that call, end
// that stream, that user's pool changed) travels over Redis pub/sub.
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestState, echoTool, sleepTool, startHttpTestServer, type HttpTestServer, type TestServerState } from '../fixtures/mcp/test-server.js';
import { expectCancelledUpstream } from '../helpers/mcp-cancel.js';
import { bearer, JWT_SECRET, signToken } from '../helpers/build.js';
import { startMcpUpstream, textTool, type TestUpstream } from '../helpers/mcp-upstream.js';
import { deleteRedisKeys, testRedisUrl } from '../helpers/redis.js';
import { freePort, startServer } from '../helpers/server-process.js';
import { builtServer } from '../helpers/built-server.js';

const REDIS_URL = testRedisUrl();
const prefix = `tg-test-mcp-sessions:${randomBytes(6).toString('hex')}:`;
const children: ChildProcess[] = [];
let dir: string;
let upstream: HttpTestServer;
let upstreamState: TestServerState;
let userServer: TestUpstream;
let replicaA: string;
let replicaB: string;
let alice: string;
let bob: string;

beforeAll(async () => {
  if (!REDIS_URL) return;
  // What ships: dist/ built from these sources (test/helpers/built-server.ts).
  await builtServer();
  upstreamState = createTestState([echoTool, sleepTool]);
  upstream = await startHttpTestServer(upstreamState);
  userServer = await startMcpUpstream([textTool('lookup', (args) => `found ${String(args.text)}`)]);
  dir = await mkdtemp(join(tmpdir(), 'toolgate-mcp-sessions-'));
  const file = join(dir, 'config.yaml');
  // JSON is YAML.
  const config = {
    auth: { jwt: { secret: JWT_SECRET, issuer: 'https://issuer.test', audience: 'toolgate' } },
    store: { kind: 'redis', url: REDIS_URL, prefix },
    audit: { sink: 'off' },
    metrics: { enabled: false },
    // Loopback is allowed only because the test's user MCP server listens there.
    egress: { allow: ['127.0.0.1'] },
    mcp: { global: [{ id: 'ev', transport: 'streamable-http', url: upstream.url, prefix: true }] },
    tenants: { acme: { mcpServices: ['ev'] } },
  };
  await writeFile(file, JSON.stringify(config));
  const start = async (): Promise<string> => {
    const port = await freePort();
    const server = await startServer(file, children, { PORT: String(port) }, { built: true });
    await server.logLine((line) => String(line.msg).startsWith('Server listening'));
    return `http://127.0.0.1:${port}`;
  };
  [replicaA, replicaB] = await Promise.all([start(), start()]);
  alice = await signToken({ sub: 'alice' });
  bob = await signToken({ sub: 'bob' });
}, 240_000);
afterAll(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await upstream?.close();
  await userServer?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
  if (REDIS_URL) await deleteRedisKeys(REDIS_URL, prefix);
});

/** The SDK client, each of whose HTTP requests goes to the replica `route` picks (a load balancer in miniature). */
async function connect(route: (method: string, body: string) => string): Promise<{ client: Client; transport: StreamableHTTPClientTransport; stream: Promise<number> }> {
  let opened!: (status: number) => void;
  const stream = new Promise<number>((resolve) => (opened = resolve));
  const transport = new StreamableHTTPClientTransport(new URL(`${replicaA}/mcp`), {
    requestInit: { headers: bearer(alice) },
    fetch: async (url, init) => {
      const method = init?.method ?? 'GET';
      const target = new URL(String(url).replace(replicaA, route(method, typeof init?.body === 'string' ? init.body : '')));
      const response = await fetch(target, init);
      if (method === 'GET') opened(response.status);
      return response;
    },
  });
  const client = new Client({ name: 'replica-test', version: '1.0.0' });
  await client.connect(transport);
  return { client, transport, stream };
}

const listTools = (base: string, token: string, sessionId: string): Promise<Response> =>
  fetch(`${base}/mcp`, {
    method: 'POST',
    headers: { ...bearer(token), 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-06-18', 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });

/** A bare initialize (no SDK client, so no stream of its own is opened): the new session's id. */
async function rawInitialize(base: string): Promise<string> {
  const init = await fetch(`${base}/mcp`, {
    method: 'POST',
    headers: { ...bearer(alice), 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }),
  });
  return init.headers.get('mcp-session-id')!;
}

/** Whether an event stream ends within `ms` (reads and drops what it carries meanwhile, e.g. pings). */
async function endsWithin(stream: Response | ReadableStreamDefaultReader<Uint8Array>, ms: number): Promise<boolean> {
  const reader = stream instanceof Response ? stream.body!.getReader() : stream;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), ms)));
  try {
    for (let i = 0; i < 1000; i += 1) {
      const next = await Promise.race([reader.read(), late]);
      if (next === 'late') return false;
      if (next.done) return true;
    }
    return false;
  } finally {
    clearTimeout(timer);
  }
}

describe.skipIf(!REDIS_URL)('MCP sessions on two gateway processes sharing one Redis', () => {
  it('serves a session made on replica A on replica B, and refuses it there to another user (404)', async () => {
    const { client, transport } = await connect(() => replicaA);
    try {
      const id = transport.sessionId!;
      expect((await listTools(replicaB, alice, id)).status).toBe(200);
      expect((await listTools(replicaB, bob, id)).status).toBe(404);
    } finally {
      await client.close();
    }
  });

  it("tells the stream on replica A about a pool change made on replica B (the user registers an MCP server)", async () => {
    const { client, stream } = await connect((method) => (method === 'GET' ? replicaA : replicaB));
    try {
      expect(await stream).toBe(200);
      let announced = 0;
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
        announced += 1;
      });
      const put = await fetch(`${replicaB}/v1/users/alice/mcp-servers/search`, { method: 'PUT', headers: { ...bearer(alice), 'content-type': 'application/json' }, body: JSON.stringify({ url: userServer.url }) });
      expect(put.status).toBe(201);
      await vi.waitFor(() => expect(announced).toBeGreaterThanOrEqual(1), { timeout: 5000, interval: 50 });
      expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('user_alice_tool_lookup');
    } finally {
      await fetch(`${replicaB}/v1/users/alice/mcp-servers/search`, { method: 'DELETE', headers: bearer(alice) });
      await client.close();
    }
  });

  it('cancels a call running on replica A when notifications/cancelled reaches replica B', async () => {
    const { client } = await connect((_method, body) => (body.includes('notifications/cancelled') ? replicaB : replicaA));
    try {
      await expectCancelledUpstream(client, upstreamState);
    } finally {
      await client.close();
    }
  });

  it('closes the stream on replica A when the client reconnects its session on replica B, and keeps the newer one', async () => {
    const id = await rawInitialize(replicaA);
    const open = (base: string) => fetch(`${base}/mcp`, { headers: { ...bearer(alice), 'mcp-session-id': id, accept: 'text/event-stream' } });
    const older = await open(replicaA);
    expect(older.status).toBe(200);
    const newer = await open(replicaB);
    expect(newer.status).toBe(200);
    try {
      expect(await endsWithin(older, 10_000)).toBe(true);
      // The newer stream stays open: it is the session's stream, which DELETE then ends.
      const newerReader = newer.body!.getReader();
      expect(await endsWithin(newerReader, 300)).toBe(false);
      expect((await fetch(`${replicaA}/mcp`, { method: 'DELETE', headers: { ...bearer(alice), 'mcp-session-id': id } })).status).toBe(204);
      expect(await endsWithin(newerReader, 10_000)).toBe(true);
    } finally {
      await fetch(`${replicaA}/mcp`, { method: 'DELETE', headers: { ...bearer(alice), 'mcp-session-id': id } });
    }
  });

  it('closes the stream on replica A when the session is ended (DELETE) on replica B', async () => {
    const id = await rawInitialize(replicaA);
    expect(id).toBeTruthy();
    const events = await fetch(`${replicaA}/mcp`, { headers: { ...bearer(alice), 'mcp-session-id': id, accept: 'text/event-stream' } });
    expect(events.status).toBe(200);
    const ended = await fetch(`${replicaB}/mcp`, { method: 'DELETE', headers: { ...bearer(alice), 'mcp-session-id': id } });
    expect(ended.status).toBe(204);
    // The body ends (done) instead of waiting for the next event; bounded by the test's own timeout.
    const reader = events.body!.getReader();
    for (let i = 0; i < 100; i += 1) if ((await reader.read()).done) break;
    expect((await listTools(replicaA, alice, id)).status).toBe(404);
  });
});
