// The gateway while its Redis does not answer (nothing listens at the configured URL): rate limits
// follow store.onUnavailable, approvals and user MCP registrations fail closed with a clear error,
// every other call and the listing keep working, nothing hangs, and the metrics say the store is down.
import type { FastifyInstance } from 'fastify';
import { afterAll, describe, expect, it } from 'vitest';
import { API_KEY, bearer, buildTestApp, signToken, testConfig } from '../helpers/build.js';
import { freeLoopbackPort } from '../helpers/redis-server.js';

/** A Redis URL where nothing listens. */
const deadRedisUrl = async (): Promise<string> => `redis://127.0.0.1:${await freeLoopbackPort()}`;

const apps: FastifyInstance[] = [];
afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()));
});

async function gatewayWithoutRedis(onUnavailable?: 'fail-open' | 'fail-closed', tenant: Record<string, unknown> = {}): Promise<FastifyInstance> {
  const config = testConfig({
    egress: { allow: ['127.0.0.1'] },
    store: { kind: 'redis', url: await deadRedisUrl(), prefix: 'tg-store-down:', commandTimeoutMs: 100, ...(onUnavailable ? { onUnavailable } : {}) },
    tenants: {
      acme: { policies: { 'rate-limit': { limit: 100, tools: ['get_weather'] }, approval: { tools: ['write_note'] } }, ...tenant },
    },
  });
  const app = await buildTestApp(config);
  apps.push(app);
  return app;
}

const auth = { authorization: `Bearer ${API_KEY}` };
const execute = (app: FastifyInstance, name: string, args: Record<string, unknown> = {}) =>
  app.inject({ method: 'POST', url: '/v1/execute', headers: auth, payload: { name, arguments: args } });

describe('a gateway whose Redis does not answer', () => {
  it('refuses rate-limited calls with RATE_LIMITED and Retry-After when store.onUnavailable is fail-closed (the default)', async () => {
    const app = await gatewayWithoutRedis();
    const response = await execute(app, 'get_weather', { city: 'Oslo' });
    expect(response.statusCode).toBe(429);
    expect(response.headers['retry-after']).toBe('1');
    expect(response.json()).toMatchObject({ ok: false, error: { errorType: 'RATE_LIMITED', error: expect.stringMatching(/state store is unavailable \(store\.onUnavailable: fail-closed\)/) } });
  });

  it('admits them uncounted when store.onUnavailable is fail-open', async () => {
    const app = await gatewayWithoutRedis('fail-open');
    const response = await execute(app, 'get_weather', { city: 'Oslo' });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({ ok: true, output: expect.stringContaining('Oslo') });
  });

  it('fails approvals and user MCP registrations closed with a clear error, and serves everything else', async () => {
    const app = await gatewayWithoutRedis('fail-open');
    const started = Date.now();

    // A call that needs approval does not run: the request cannot be stored.
    const parked = await execute(app, 'write_note', { text: 'x' });
    expect(parked.statusCode).toBe(200);
    expect(parked.json()).toMatchObject({ ok: false, error: { errorType: 'UPSTREAM_ERROR', error: expect.stringMatching(/approval.*state store is unavailable/) } });

    // Approvals and registrations answer 503 TG_STORE_UNAVAILABLE with Retry-After.
    for (const request of [
      { method: 'GET' as const, url: '/v1/approvals?status=pending' },
      { method: 'PUT' as const, url: '/v1/users/ci-bot/mcp-servers/notes', payload: { url: 'http://127.0.0.1:9/mcp' } },
      { method: 'GET' as const, url: '/v1/users/ci-bot/mcp-servers' },
    ]) {
      const response = await app.inject({ ...request, headers: auth });
      expect(response.statusCode, request.url).toBe(503);
      expect(response.headers['retry-after'], request.url).toBe('1');
      expect(response.json(), request.url).toMatchObject({ code: 'TG_STORE_UNAVAILABLE', message: expect.stringMatching(/state store is unavailable.*retry later/) });
    }

    // The caller's own MCP tools cannot be looked up: a call to one says so; other tools and the listing work.
    const own = await execute(app, 'user_ci-bot_tool_search');
    expect(own.json()).toMatchObject({ ok: false, error: { errorType: 'UPSTREAM_ERROR', error: expect.stringMatching(/your own MCP servers cannot be looked up/) } });
    expect((await execute(app, 'with_trace')).json()).toMatchObject({ ok: true });
    const listing = await app.inject({ method: 'GET', url: '/v1/tools', headers: auth });
    expect(listing.statusCode).toBe(200);
    expect((listing.json() as { tools: Array<{ name: string }> }).tools.map((t) => t.name)).toContain('get_weather');

    expect(Date.now() - started).toBeLessThan(10_000); // liveness: every answer came, none hung

    const metrics = await app.metrics.registry.metrics();
    expect(metrics).toMatch(/^toolgate_store_up 0$/m);
    // The approval request is counted before it is stored; the pending listing reads that count.
    expect(metrics).toMatch(/^toolgate_store_unavailable_total\{operation="acquireLease"\} 1$/m);
    expect(metrics).toMatch(/^toolgate_store_unavailable_total\{operation="readLeases"\} 1$/m);
  });

  // Listing the caller's own MCP servers is a store read (`get`): a call whose outcome they cannot change
  // must not make it, so a slow or absent store costs such calls nothing (docs/architecture.md#catalog-and-pools).
  it('reads the store for the caller\'s own MCP tools only for calls they can change', async () => {
    const storeGets = async (app: FastifyInstance): Promise<number> =>
      Number(/^toolgate_store_unavailable_total\{operation="get"\} (\d+)$/m.exec(await app.metrics.registry.metrics())?.[1] ?? 0);
    const batch = (app: FastifyInstance, names: string[]) =>
      app.inject({ method: 'POST', url: '/v1/execute/batch', headers: auth, payload: { calls: names.map((name) => ({ name })) } });

    const app = await gatewayWithoutRedis('fail-open');
    // Start-up looks once (the file's tenants checked against the store's): only what calls read counts here.
    const atStart = await storeGets(app);
    expect((await execute(app, 'with_trace')).json()).toMatchObject({ ok: true });
    expect((await execute(app, 'no_such_tool')).json()).toMatchObject({ ok: false, error: { errorType: 'UNKNOWN_TOOL' } });
    expect((await batch(app, ['with_trace', 'with_trace'])).json()).toMatchObject({ results: [{ ok: true }, { ok: true }] });
    expect((await storeGets(app)) - atStart).toBe(0);

    // A name in the user namespace, and tool_search (present only while something is deferred), do look.
    expect((await execute(app, 'user_ci-bot_tool_search')).json()).toMatchObject({ ok: false, error: { errorType: 'UPSTREAM_ERROR' } });
    expect((await storeGets(app)) - atStart).toBe(1);
    await execute(app, 'tool_search', { query: 'weather' });
    expect((await storeGets(app)) - atStart).toBe(2);
    expect((await batch(app, ['with_trace', 'user_ci-bot_tool_x'])).json()).toMatchObject({ results: [{ ok: true }, { ok: false }] });
    expect((await storeGets(app)) - atStart).toBe(3);

    // A tenant that defers by count counts the caller's own tools: every call looks.
    const deferring = await gatewayWithoutRedis('fail-open', { deferThreshold: 50 });
    const deferringAtStart = await storeGets(deferring);
    expect((await execute(deferring, 'with_trace')).json()).toMatchObject({ ok: true });
    expect((await storeGets(deferring)) - deferringAtStart).toBe(1);
  });

  it('keeps serving the file\'s tenants, and answers 503 for a tenant it would have to read from the store', async () => {
    const app = await gatewayWithoutRedis('fail-open');
    expect((await execute(app, 'with_trace')).json()).toMatchObject({ ok: true });
    const elsewhere = await app.inject({ method: 'GET', url: '/v1/tools', headers: bearer(await signToken({ tenant: 'from-the-store' })) });
    expect(elsewhere.statusCode).toBe(503);
    expect(elsewhere.headers['retry-after']).toBe('1');
    expect(elsewhere.json()).toMatchObject({ code: 'TG_STORE_UNAVAILABLE' });
    const tenants = await app.inject({ method: 'GET', url: '/v1/admin/tenants/from-the-store', headers: bearer(API_KEY) });
    expect(tenants.statusCode).toBe(404);
  });
});
