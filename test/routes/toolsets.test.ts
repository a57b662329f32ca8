// Named toolsets (virtual servers): REST listing, search and execution narrowed to a subset, and /mcp/<toolset>
// seen by the SDK's own client over real HTTP.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, buildTestApp, signToken, testConfig } from '../helpers/build.js';

const tenants = (weatherTools: string[]) => ({
  acme: {
    tools: { allow: ['*'], deny: ['write_note'] },
    toolsets: {
      weather: { description: 'Weather desk', tools: weatherTools },
      everything: { tools: ['*'] },
    },
  },
  globex: { functions: ['get_weather'], toolsets: { mine: { tools: ['*'] } } },
});
const config = (weatherTools = ['get_weather', 'write_note', 'slow']) => testConfig({ tools: { slow: { deferLoading: true } }, tenants: tenants(weatherTools) });

let app: FastifyInstance;
let baseUrl: string;
let acme: string;
let globex: string;
beforeAll(async () => {
  app = await buildTestApp(config());
  baseUrl = await app.listen({ host: '127.0.0.1', port: 0 });
  acme = await signToken({ sub: 'alice' });
  globex = await signToken({ sub: 'bob', tenant: 'globex' });
});
afterAll(async () => app.close());

const names = (body: { tools: { name: string }[] }): string[] => body.tools.map((tool) => tool.name);
const get = (url: string, token = acme) => app.inject({ method: 'GET', url, headers: bearer(token) });
const execute = (payload: Record<string, unknown>, token = acme) => app.inject({ method: 'POST', url: '/v1/execute', headers: bearer(token), payload });

describe('toolsets over REST', () => {
  it('lists only the subset of the caller pool, never a tool the tenant denies', async () => {
    const res = await get('/v1/tools?toolset=weather');
    expect(res.statusCode).toBe(200);
    // write_note matches the toolset's globs but the tenant denies it: a toolset narrows, never widens.
    expect(names(res.json())).toEqual(['tool_search', 'get_weather', 'slow']);
    expect(names((await get('/v1/tools?toolset=everything')).json())).toEqual(names((await get('/v1/tools')).json()));
  });

  it('keeps its own ETag per toolset and answers 304', async () => {
    const full = await get('/v1/tools');
    const subset = await get('/v1/tools?toolset=weather');
    expect(subset.headers.etag).not.toBe(full.headers.etag);
    const again = await app.inject({ method: 'GET', url: '/v1/tools?toolset=weather', headers: { ...bearer(acme), 'if-none-match': String(subset.headers.etag) } });
    expect(again.statusCode).toBe(304);
  });

  it('searches only the subset, over REST and through its tool_search', async () => {
    expect(names((await get('/v1/tools/search?q=big&toolset=weather')).json())).toEqual([]);
    expect(names((await get('/v1/tools/search?q=big')).json())).toContain('big_output');
    const viaTool = await execute({ name: 'tool_search', arguments: { query: 'big output' }, toolset: 'weather' });
    expect(JSON.parse(viaTool.json().output).tools).toEqual([]);
    const found = await execute({ name: 'tool_search', arguments: { query: 'slow' }, toolset: 'weather' });
    expect(JSON.parse(found.json().output).tools.map((tool: { name: string }) => tool.name)).toEqual(['slow']);
  });

  it('runs a call inside the toolset and refuses one outside it with PERMISSION_DENIED', async () => {
    expect((await execute({ name: 'get_weather', arguments: { city: 'Oslo' }, toolset: 'weather' })).json()).toMatchObject({ ok: true });
    expect((await execute({ name: 'explode', toolset: 'weather' })).json()).toMatchObject({ ok: false, error: { errorType: 'PERMISSION_DENIED', error: 'tool explode is not in toolset weather' } });
    // A denied tool stays denied, the same answer as without a toolset.
    expect((await execute({ name: 'write_note', arguments: { text: 'x' }, toolset: 'weather' })).json()).toMatchObject({ ok: false, error: { errorType: 'PERMISSION_DENIED' } });
    // An alias of a tool inside the toolset resolves as usual.
    expect((await execute({ name: 'weather', arguments: { city: 'Oslo' }, toolset: 'weather' })).json()).toMatchObject({ ok: true, name: 'get_weather', resolvedFrom: 'weather' });
  });

  it('answers a name the tenant can never reach exactly as an unknown name, toolset or not', async () => {
    const through = (await execute({ name: 'write_note', arguments: { text: 'x' }, toolset: 'mine' }, globex)).json();
    const plain = (await execute({ name: 'write_note', arguments: { text: 'x' } }, globex)).json();
    const nobody = (await execute({ name: 'no_such_tool', toolset: 'mine' }, globex)).json();
    expect(through.error).toEqual({ errorType: 'UNKNOWN_TOOL', error: 'unknown tool: write_note' });
    expect(plain.error).toEqual(through.error);
    expect(nobody.error).toEqual({ errorType: 'UNKNOWN_TOOL', error: 'unknown tool: no_such_tool' });
  });

  it('takes a toolset in the batch too', async () => {
    const res = await app.inject({
      method: 'POST', url: '/v1/execute/batch', headers: bearer(acme),
      payload: { toolset: 'weather', calls: [{ name: 'get_weather', arguments: { city: 'Oslo' } }, { name: 'explode' }] },
    });
    expect(res.json().results.map((result: { ok: boolean; error?: { errorType: string } }) => result.error?.errorType ?? 'ok')).toEqual(['ok', 'PERMISSION_DENIED']);
  });

  it("answers 404 for an unknown toolset and for another tenant's, on every route", async () => {
    for (const name of ['nope', 'mine']) {
      for (const res of [
        await get(`/v1/tools?toolset=${name}`),
        await get(`/v1/tools/search?q=x&toolset=${name}`),
        await execute({ name: 'get_weather', arguments: { city: 'Oslo' }, toolset: name }),
        await app.inject({ method: 'POST', url: '/v1/execute/batch', headers: bearer(acme), payload: { toolset: name, calls: [{ name: 'get_weather' }] } }),
      ]) {
        expect(res.statusCode).toBe(404);
        expect(res.json()).toEqual({ statusCode: 404, code: 'TG_NOT_FOUND', error: 'Not Found', message: `unknown toolset: ${name}` });
      }
    }
  });

  it('follows a config reload', async () => {
    try {
      await app.gateway.reload(config(['get_weather', 'explode']));
      expect(names((await get('/v1/tools?toolset=weather')).json())).toEqual(['explode', 'get_weather']);
      await app.gateway.reload(testConfig({ tenants: { acme: {}, globex: {} } }));
      expect((await get('/v1/tools?toolset=weather')).statusCode).toBe(404);
    } finally {
      await app.gateway.reload(config());
    }
  });
});

async function mcpClient(path: string, token = acme): Promise<Client> {
  const client = new Client({ name: 'test-agent', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${baseUrl}${path}`), { requestInit: { headers: bearer(token) } }));
  return client;
}

describe('/mcp/<toolset> with the SDK client', () => {
  it('lists only the subset and refuses a call outside it', async () => {
    const client = await mcpClient('/mcp/weather');
    try {
      expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['tool_search', 'get_weather', 'slow']);
      expect(await client.callTool({ name: 'get_weather', arguments: { city: 'Oslo' } })).toMatchObject({ isError: false });
      const outside = await client.callTool({ name: 'explode', arguments: {} });
      expect(outside.isError).toBe(true);
      expect(JSON.stringify(outside.content)).toContain('PERMISSION_DENIED');
    } finally {
      await client.close();
    }
  });

  it("refuses an unknown toolset, or another tenant's, with a plain 404", async () => {
    await expect(mcpClient('/mcp/nope')).rejects.toThrow(/404/);
    await expect(mcpClient('/mcp/mine')).rejects.toThrow(/404/);
    const res = await fetch(`${baseUrl}/mcp/mine`, {
      method: 'POST',
      headers: { ...bearer(acme), 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
    });
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ code: 'TG_NOT_FOUND', message: 'unknown toolset: mine' });
  });

  it('needs the same token as /mcp', async () => {
    const res = await fetch(`${baseUrl}/mcp/weather`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(res.status).toBe(401);
  });
});
