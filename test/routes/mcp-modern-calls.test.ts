// Long calls in the MCP 2026-07-28 era: closing the request cancels the call down to its upstream (no
// session carries a cancel), and an upstream's progress reaches the client under its own token.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestState, echoTool, sleepTool, startHttpTestServer, type HttpTestServer, type TestServerState } from '../fixtures/mcp/test-server.js';
import { bearer, buildTestApp, signToken, testConfig } from '../helpers/build.js';
import { connectModernClient, MODERN_VERSION } from '../helpers/mcp-modern.js';

let app: FastifyInstance;
let upstream: HttpTestServer;
let upstreamState: TestServerState;
let baseUrl: string;
let token: string;

beforeAll(async () => {
  upstreamState = createTestState([echoTool, sleepTool]);
  upstream = await startHttpTestServer(upstreamState);
  app = await buildTestApp(
    testConfig({
      mcp: {
        local: [{ service: 'progress', module: './test/fixtures/mcp/progress-module.mjs' }],
        global: [{ id: 'ev', transport: 'streamable-http', url: upstream.url, prefix: true }],
      },
      tenants: { acme: { mcpServices: ['ev'] }, globex: {} },
    }),
  );
  baseUrl = await app.listen({ host: '127.0.0.1', port: 0 });
  token = await signToken({ sub: 'alice' });
});
afterAll(async () => {
  await app.close();
  await upstream.close();
});

describe('long calls in the modern era', () => {
  it('cancels the upstream call when the client closes the request of a tools/call', async () => {
    const before = upstreamState.cancelled.length;
    const hangUp = new AbortController();
    const meta = { 'io.modelcontextprotocol/protocolVersion': MODERN_VERSION, 'io.modelcontextprotocol/clientCapabilities': {} };
    const pending = fetch(`${baseUrl}/mcp`, {
      method: 'POST',
      signal: hangUp.signal,
      headers: { ...bearer(token), 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': MODERN_VERSION, 'mcp-method': 'tools/call', 'mcp-name': 'ev_sleep' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'ev_sleep', arguments: {}, _meta: meta } }),
    }).catch((error: unknown) => error);
    await vi.waitFor(() => expect(upstreamState.calls.slice(-1)).toEqual(['sleep']));
    hangUp.abort();
    expect(await pending).toBeInstanceOf(Error);
    await vi.waitFor(() => expect(upstreamState.cancelled.length).toBe(before + 1), { timeout: 5000 });
  });

  it("relays an upstream's progress to the SDK v2 client under the client's token", async () => {
    const client = await connectModernClient(baseUrl, token);
    try {
      expect(client.getNegotiatedProtocolVersion()).toBe(MODERN_VERSION);
      const steps: number[] = [];
      const result = await client.callTool({ name: 'progress_count', arguments: { to: 3 } }, { onprogress: (progress) => steps.push(progress.progress) });
      expect(result.content).toEqual([{ type: 'text', text: 'counted to 3' }]);
      expect(steps).toEqual([1, 2, 3]);
    } finally {
      await client.close();
    }
  });
});
