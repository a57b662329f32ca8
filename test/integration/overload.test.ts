import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Agent, request } from 'undici';
import type { FastifyInstance } from 'fastify';
import { bearer, buildTestApp, scrapeMetrics, signToken, testConfig } from '../helpers/build.js';

let app: FastifyInstance;
let base: string;
let token: string;
const agent = new Agent({ connections: 16 });

beforeAll(async () => {
  app = await buildTestApp(testConfig({ server: { maxInFlight: 3 }, tenants: { acme: { limits: { maxInFlight: 2 } }, globex: {} } }));
  base = await app.listen({ host: '127.0.0.1', port: 0 });
  token = await signToken();
});
afterAll(async () => {
  await app.close();
  await agent.close();
});

const slowCall = (tenantToken: string, ms: number) =>
  request(`${base}/v1/execute`, {
    method: 'POST',
    dispatcher: agent,
    headers: { ...bearer(tenantToken), 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'slow', arguments: { ms } }),
  }).then(async (res) => ({ status: res.statusCode, retryAfter: res.headers['retry-after'], body: (await res.body.json()) as Record<string, unknown> }));

/** Waits (bounded) until `n` requests are admitted and running, instead of guessing with a fixed sleep. */
async function inFlight(n: number): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (Date.now() < deadline) {
    if ((await scrapeMetrics(app)).includes(`toolgate_http_requests_in_flight ${n}\n`)) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`never saw ${n} requests in flight`);
}

describe('overload protection over a real socket', () => {
  it('answers 503 + Retry-After beyond a tenant in-flight bound, without disturbing the running calls', async () => {
    const running = [slowCall(token, 600), slowCall(token, 600)];
    await inFlight(2);
    const shed = await slowCall(token, 1);
    expect(shed.status).toBe(503);
    expect(shed.body).toMatchObject({ code: 'TG_OVERLOADED' });
    expect(shed.retryAfter).toBe('1');
    expect(await scrapeMetrics(app)).toContain('toolgate_overload_refusals_total{scope="tenant"} 1');
    const done = await Promise.all(running);
    expect(done.map((r) => r.status)).toEqual([200, 200]);
    expect((await slowCall(token, 1)).status).toBe(200);
  });

  it('answers 503 beyond the server-wide bound for any tenant, but keeps answering /healthz', async () => {
    const globex = await signToken({ tenant: 'globex' });
    const running = [slowCall(globex, 600), slowCall(globex, 600), slowCall(globex, 600)];
    await inFlight(3);
    const listing = await request(`${base}/v1/tools`, { dispatcher: agent, headers: bearer(token) });
    expect(listing.statusCode).toBe(503);
    expect(listing.headers['retry-after']).toBe('1');
    await listing.body.dump();
    expect(await scrapeMetrics(app)).toContain('toolgate_overload_refusals_total{scope="server"} 1');
    const health = await request(`${base}/healthz`, { dispatcher: agent });
    expect(health.statusCode).toBe(200);
    await health.body.dump();
    expect((await Promise.all(running)).map((r) => r.status)).toEqual([200, 200, 200]);
  });

  it('counts token-less requests apart: with every authenticated slot taken, /openapi.json answers and a request without a token gets 401, not 503', async () => {
    const globex = await signToken({ tenant: 'globex' });
    const running = [slowCall(globex, 600), slowCall(globex, 600), slowCall(globex, 600)];
    await inFlight(3);
    const shed = await request(`${base}/v1/tools`, { dispatcher: agent, headers: bearer(token) });
    expect(shed.statusCode).toBe(503);
    await shed.body.dump();
    const openapi = await request(`${base}/openapi.json`, { dispatcher: agent });
    expect(openapi.statusCode).toBe(200);
    await openapi.body.dump();
    const anonymous = await request(`${base}/v1/tools`, { dispatcher: agent });
    expect(anonymous.statusCode).toBe(401);
    await anonymous.body.dump();
    expect((await Promise.all(running)).map((r) => r.status)).toEqual([200, 200, 200]);
  });

  it('applies the same tenant bound to /mcp requests', async () => {
    const running = [slowCall(token, 600), slowCall(token, 600)];
    await inFlight(2);
    const mcp = await request(`${base}/mcp`, {
      method: 'POST',
      dispatcher: agent,
      headers: { ...bearer(token), 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
    });
    expect(mcp.statusCode).toBe(503);
    expect(((await mcp.body.json()) as { code: string }).code).toBe('TG_OVERLOADED');
    expect((await Promise.all(running)).map((r) => r.status)).toEqual([200, 200]);
    // The slot is given back once an MCP request is answered.
    for (let i = 0; i < 3; i += 1) {
      const ok = await request(`${base}/mcp`, {
        method: 'POST',
        dispatcher: agent,
        headers: { ...bearer(token), 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} }),
      });
      expect(ok.statusCode).toBe(200);
      await ok.body.dump();
    }
  });
});
