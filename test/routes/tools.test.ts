import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { bearer, buildTestApp, scrapeMetrics, signToken, testConfig } from '../helpers/build.js';

let app: FastifyInstance;
let token: string;
beforeAll(async () => {
  app = await buildTestApp(
    testConfig({
      tools: { slow: { deferLoading: true, searchHint: 'waits a while' } },
      tenants: {
        acme: { roles: { viewer: { deny: ['write_*'] } } },
        globex: { tools: { allow: ['get_weather'] } },
      },
    }),
  );
  token = await signToken();
});
afterAll(async () => app.close());

const list = (query = '', headers: Record<string, string> = bearer(token)) => app.inject({ method: 'GET', url: `/v1/tools${query}`, headers });

describe('GET /v1/tools', () => {
  it('lists the native format by default, built-ins first then sorted by name', async () => {
    const res = await list();
    expect(res.statusCode).toBe(200);
    const { tools } = res.json();
    expect(tools.map((t: { name: string }) => t.name)).toEqual(['tool_search', 'big_output', 'explode', 'get_weather', 'slow', 'with_trace', 'write_note']);
    expect(tools.find((t: { name: string }) => t.name === 'get_weather')).toEqual({
      name: 'get_weather', description: 'Weather for a city', source: 'function', readOnly: true, destructive: false, aliases: ['weather'],
      inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
    });
  });

  it('lists a deferred tool with deferLoading, its hint and no schema, and adds tool_search', async () => {
    const { tools } = (await list()).json();
    const slow = tools.find((t: { name: string }) => t.name === 'slow');
    expect(slow).toMatchObject({ deferLoading: true, searchHint: 'waits a while' });
    expect(slow.inputSchema).toBeUndefined();
    expect(tools[0].name).toBe('tool_search');
  });

  it('speaks the OpenAI, Anthropic and MCP shapes', async () => {
    const openai = (await list('?format=openai')).json();
    expect(openai.find((t: { function: { name: string } }) => t.function.name === 'get_weather')).toEqual({
      type: 'function',
      function: { name: 'get_weather', description: 'Weather for a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false } },
    });
    const anthropic = (await list('?format=anthropic')).json();
    expect(anthropic.find((t: { name: string }) => t.name === 'get_weather')).toEqual({
      name: 'get_weather', description: 'Weather for a city', input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
    });
    expect(anthropic.find((t: { name: string }) => t.name === 'slow')).toMatchObject({ defer_loading: true });
    const mcp = (await list('?format=mcp')).json();
    expect(mcp.tools.find((t: { name: string }) => t.name === 'get_weather')).toEqual({
      name: 'get_weather', description: 'Weather for a city',
      inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
      annotations: { readOnlyHint: true, destructiveHint: false },
    });
  });

  it('gives each tenant its own listing in every format, whichever tenant listed the same text before', async () => {
    const names = async (tenant: string, format: string): Promise<string> =>
      (await list(`?format=${format}`, bearer(await signToken({ tenant, sub: `u-${tenant}` })))).body;
    for (const format of ['native', 'openai', 'anthropic', 'mcp', 'gemini']) {
      const [acme, globex, acmeAgain] = [await names('acme', format), await names('globex', format), await names('acme', format)];
      expect(globex, format).toContain('get_weather');
      expect(globex, format).not.toContain('write_note');
      expect(acme, format).toContain('write_note');
      expect(acmeAgain, format).toBe(acme);
    }
  });

  it('refuses an unknown format', async () => {
    const res = await list('?format=xml');
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe('TG_BAD_REQUEST');
  });

  it('answers 304 to If-None-Match with the current ETag, per format', async () => {
    const first = await list();
    const etag = first.headers.etag as string;
    expect(etag).toMatch(/^"native-[0-9a-f]{32}"$/);
    expect((await list('', { ...bearer(token), 'if-none-match': etag })).statusCode).toBe(304);
    expect((await list('?format=openai', { ...bearer(token), 'if-none-match': etag })).statusCode).toBe(200);
    expect((await list()).headers.etag).toBe(etag);
  });

  it('strips non-read-only tools with X-Toolgate-Mode: readonly, in listing and execution alike', async () => {
    const res = await list('', { ...bearer(token), 'x-toolgate-mode': 'readonly' });
    const listed = res.json().tools.map((t: { name: string }) => t.name);
    expect(listed).not.toContain('write_note');
    expect(listed).not.toContain('explode');
    expect(listed).toContain('get_weather');
    const exec = await app.inject({ method: 'POST', url: '/v1/execute', headers: { ...bearer(token), 'x-toolgate-mode': 'readonly' }, payload: { name: 'write_note', arguments: { text: 'x' } } });
    expect(exec.json().error.errorType).toBe('PERMISSION_DENIED');
  });

  it('narrows by role inside the tenant and by tenant allowlist', async () => {
    const viewer = await signToken({ roles: ['viewer'] });
    expect((await list('', bearer(viewer))).json().tools.map((t: { name: string }) => t.name)).not.toContain('write_note');
    const globex = await signToken({ tenant: 'globex' });
    expect((await list('', bearer(globex))).json().tools.map((t: { name: string }) => t.name)).toEqual(['get_weather']);
    // Outside the tenant's allow globs: a tool it can never get answers as an unknown name.
    const denied = await app.inject({ method: 'POST', url: '/v1/execute', headers: bearer(globex), payload: { name: 'write_note', arguments: { text: 'x' } } });
    expect(denied.json().error.errorType).toBe('UNKNOWN_TOOL');
  });
});

describe('tool search', () => {
  it('GET /v1/tools/search returns full schemas of matches, deferred tools included', async () => {
    const res = await app.inject({ method: 'GET', url: '/v1/tools/search?q=waits%20while', headers: bearer(token) });
    expect(res.statusCode).toBe(200);
    expect(res.json().tools[0]).toMatchObject({ name: 'slow', deferLoading: true, inputSchema: { type: 'object' } });
  });

  it('the tool_search tool returns the same full schemas', async () => {
    const res = await app.inject({ method: 'POST', url: '/v1/execute', headers: bearer(token), payload: { name: 'tool_search', arguments: { query: 'slow' } } });
    const output = JSON.parse(res.json().output);
    expect(output.tools[0]).toMatchObject({ name: 'slow', inputSchema: { properties: { ms: { type: 'integer' } } } });
  });

  it('tells the model to call tool_search first when a deferred tool gets bad arguments', async () => {
    const res = await app.inject({ method: 'POST', url: '/v1/execute', headers: bearer(token), payload: { name: 'slow', arguments: { ms: 'soon' } } });
    expect(res.json().error.errorType).toBe('VALIDATION_ERROR');
    expect(res.json().error.error).toContain('call tool_search first');
  });

  it('validates the query', async () => {
    expect((await app.inject({ method: 'GET', url: '/v1/tools/search', headers: bearer(token) })).statusCode).toBe(400);
    expect((await app.inject({ method: 'GET', url: '/v1/tools/search?q=x&limit=1000', headers: bearer(token) })).statusCode).toBe(400);
  });
});

describe('operations routes', () => {
  it('serves health, readiness and the OpenAPI document without auth, and metrics on the metrics listener', async () => {
    expect((await app.inject({ url: '/healthz' })).json()).toEqual({ status: 'ok' });
    const ready = await app.inject({ url: '/readyz' });
    expect(ready.statusCode).toBe(200);
    // Status only: which upstreams exist and how they fare is for operators.
    expect(ready.json()).toEqual({ status: 'ready' });
    await app.inject({ method: 'POST', url: '/v1/execute', headers: bearer(token), payload: { name: 'get_weather', arguments: { city: 'x' } } });
    await app.inject({ method: 'POST', url: '/v1/execute', headers: bearer(token), payload: { name: 'hostile<script>name' } });
    const metrics = await scrapeMetrics(app);
    expect(metrics).toContain('toolgate_tool_calls_total{tool="get_weather",source="function",outcome="ok"}');
    expect(metrics).toContain('toolgate_tool_calls_total{tool="__unknown__",source="none",outcome="UNKNOWN_TOOL"}');
    expect(metrics).not.toContain('hostile');
    expect(metrics).toContain('toolgate_tool_call_duration_seconds_bucket{le="0.001",tool="get_weather",source="function"}');
    expect(metrics).toContain('toolgate_tool_call_duration_seconds_count{tool="get_weather",source="function"} 1');
    expect(metrics).toContain('toolgate_log_lines_dropped_total 0');
    expect(metrics).toMatch(/toolgate_http_requests_total\{method="POST",route="\/v1\/execute",status="200"\}/);
    const doc = (await app.inject({ url: '/openapi.json' })).json();
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/v1/tools', '/v1/execute', '/healthz']));
  });

  it('answers unknown routes with a TG_NOT_FOUND body', async () => {
    const res = await app.inject({ url: '/v2/nothing' });
    expect(res.statusCode).toBe(404);
    expect(res.json().code).toBe('TG_NOT_FOUND');
  });
});
