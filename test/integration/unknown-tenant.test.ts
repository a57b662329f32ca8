// A tenant removed by a reload while its caller is already authenticated (a cached token, a body still
// uploading) answers 403 TG_UNKNOWN_TENANT on every route — never a 500 or a misleading 503.
import { PassThrough } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { UnknownTenantError } from '../../src/snapshot/caller-pools.js';
import { bearer, buildTestApp, signToken, testConfig } from '../helpers/build.js';

const withGlobex = () => testConfig();
const withoutGlobex = () => testConfig({ tenants: { acme: {} } });
let app: FastifyInstance;
let globex: string;

beforeEach(async () => {
  app = await buildTestApp(withGlobex());
  globex = await signToken({ sub: 'gina', tenant: 'globex' });
});
afterEach(async () => {
  vi.restoreAllMocks();
  await app.close();
});

const unknownTenant = { statusCode: 403, code: 'TG_UNKNOWN_TENANT' };
const mcpCall = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_weather', arguments: { city: 'x' } } };
const mcpHeaders = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

const ROUTES = [
  { url: '/v1/execute', payload: { name: 'get_weather', arguments: { city: 'x' } } },
  { url: '/v1/execute/batch', payload: { calls: [{ name: 'get_weather', arguments: { city: 'x' } }] } },
  { url: '/mcp', payload: mcpCall, headers: mcpHeaders },
];

describe('a tenant removed by a reload', () => {
  it.each(ROUTES)('answers 403 TG_UNKNOWN_TENANT on $url when the reload lands while the body uploads', async ({ url, payload, headers }) => {
    expect((await app.inject({ method: 'POST', url, headers: { ...bearer(globex), ...headers }, payload })).statusCode).toBe(200);
    const body = new PassThrough();
    const pending = app.inject({ method: 'POST', url, headers: { ...bearer(globex), 'content-type': 'application/json', ...headers }, payload: body });
    const text = JSON.stringify(payload);
    body.write(text.slice(0, 5));
    await new Promise((resolve) => setTimeout(resolve, 50)); // authenticated by now; the body is still coming
    await app.gateway.reload(withoutGlobex());
    body.end(text.slice(5));
    const res = await pending;
    expect(res.json()).toMatchObject(unknownTenant);
  });

  it.each(ROUTES)('answers 403 TG_UNKNOWN_TENANT on $url when the gateway no longer knows the tenant at execution', async ({ url, payload, headers }) => {
    // The gateway's own check, as it runs when the tenant disappears between admission and execution.
    vi.spyOn(app.gateway, 'execute').mockRejectedValue(new UnknownTenantError('globex'));
    vi.spyOn(app.gateway, 'scopeFor').mockRejectedValue(new UnknownTenantError('globex'));
    const res = await app.inject({ method: 'POST', url, headers: { ...bearer(globex), ...headers }, payload });
    if (url === '/mcp') {
      // The JSON-RPC answer is already under way: the error names the code instead of a bare internal error.
      expect(JSON.stringify(res.json())).toContain('TG_UNKNOWN_TENANT');
    } else {
      expect(res.json()).toMatchObject(unknownTenant);
    }
  });

  it('answers 403 TG_UNKNOWN_TENANT to the listing and to a token authenticated before the reload', async () => {
    expect((await app.inject({ url: '/v1/tools', headers: bearer(globex) })).statusCode).toBe(200);
    await app.gateway.reload(withoutGlobex());
    for (const url of ['/v1/tools', '/v1/tools/search?q=weather']) {
      expect((await app.inject({ url, headers: bearer(globex) })).json()).toMatchObject(unknownTenant);
    }
    for (const { url, payload, headers } of ROUTES) {
      expect((await app.inject({ method: 'POST', url, headers: { ...bearer(globex), ...headers }, payload })).json()).toMatchObject(unknownTenant);
    }
  });
});
