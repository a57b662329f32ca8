// A tenant the bounded compiled cache (`tenancy.compiledCacheSize`) dropped after its caller was authenticated
// is still configured: its calls are admitted (it is compiled again), never refused as an unknown tenant.
import { PassThrough } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { bearer, buildTestApp, signToken, testConfig } from '../helpers/build.js';

let app: FastifyInstance;
let globex: string;
let acme: string;

beforeEach(async () => {
  app = await buildTestApp(testConfig({ tenancy: { compiledCacheSize: 1 } }));
  globex = await signToken({ sub: 'gina', tenant: 'globex' });
  acme = await signToken({ sub: 'alice', tenant: 'acme' });
});
afterEach(async () => {
  await app.close();
});

/** Another tenant's listing: with a cache of one, it drops whichever tenant was compiled before. */
async function evictGlobex(): Promise<void> {
  expect((await app.inject({ url: '/v1/tools', headers: bearer(acme) })).statusCode).toBe(200);
  expect(app.gateway.current().tenants.isCompiled('globex')).toBe(false);
}

const MCP = { accept: 'application/json, text/event-stream' };
const modernMeta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientInfo': { name: 't', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': {} };
const ROUTES: Array<{ url: string; payload: object; headers?: Record<string, string> }> = [
  { url: '/v1/execute', payload: { name: 'get_weather', arguments: { city: 'x' } } },
  { url: '/v1/execute/batch', payload: { calls: [{ name: 'get_weather', arguments: { city: 'x' } }] } },
  // Both MCP eras check the caller's tenant again when the message is handled.
  { url: '/mcp', headers: { ...MCP, 'mcp-protocol-version': '2025-11-25' }, payload: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_weather', arguments: { city: 'x' } } } },
  {
    url: '/mcp',
    headers: { ...MCP, 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'get_weather' },
    payload: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_weather', arguments: { city: 'x' }, _meta: modernMeta } },
  },
];

describe('a tenant dropped from the compiled cache', () => {
  it.each(ROUTES)('is admitted on $url ($headers) when it was dropped while the body uploads', async ({ url, payload, headers }) => {
    const body = new PassThrough();
    const pending = app.inject({ method: 'POST', url, headers: { ...bearer(globex), 'content-type': 'application/json', ...headers }, payload: body });
    const text = JSON.stringify(payload);
    body.write(text.slice(0, 5));
    await new Promise((resolve) => setTimeout(resolve, 50)); // authenticated by now; the body is still coming
    await evictGlobex();
    body.end(text.slice(5));
    const res = await pending;
    expect(res.statusCode, res.body).toBe(200);
    expect(res.body).toContain('tempC');
    expect(res.body).not.toContain('"isError":true');
  });

  it('gets a slot for a detached run (a task) after it was dropped, and none once it is gone', async () => {
    expect((await app.inject({ url: '/v1/tools', headers: bearer(globex) })).statusCode).toBe(200);
    await evictGlobex();
    const release = await app.tenantSlots.take('globex');
    expect(release).toBeTypeOf('function');
    release?.();
    expect(await app.tenantSlots.take('nobody')).toBeUndefined();
  });
});
