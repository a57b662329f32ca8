// Metrics cover every tenant (tool names, call counts): never on the API port to an anonymous caller.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { bearer, buildTestApp, signToken, testConfig } from '../helpers/build.js';

const METRICS_TOKEN = 'metrics-token-for-tests-0123456789';

async function callWeather(app: FastifyInstance): Promise<void> {
  const res = await app.inject({ method: 'POST', url: '/v1/execute', headers: bearer(await signToken()), payload: { name: 'get_weather', arguments: { city: 'x' } } });
  expect(res.json().ok).toBe(true);
}

describe('metrics by default', () => {
  let app: FastifyInstance;
  beforeAll(async () => {
    app = await buildTestApp();
    await callWeather(app);
  });
  afterAll(async () => app.close());

  it('are not served on the API port, with or without a token', async () => {
    for (const headers of [{}, bearer(await signToken({ roles: ['admin'] }))]) {
      const res = await app.inject({ url: '/metrics', headers });
      expect(res.statusCode).toBe(404);
      expect(res.json().code).toBe('TG_NOT_FOUND');
      expect(res.body).not.toContain('get_weather');
    }
  });

  it('are served on their own listener (a real socket on loopback)', async () => {
    expect(app.gateway.config.metrics).toMatchObject({ enabled: true, host: '127.0.0.1', port: 9464 });
    const address = await app.metricsServer!.listen({ host: '127.0.0.1', port: 0 });
    const res = await fetch(`${address}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/plain');
    expect(await res.text()).toContain('toolgate_tool_calls_total{tool="get_weather",source="function",outcome="ok"} 1');
    expect((await fetch(`${address}/v1/tools`)).status).toBe(404);
  });
});

describe('metrics.token', () => {
  let app: FastifyInstance;
  beforeAll(async () => {
    app = await buildTestApp(testConfig({ metrics: { enabled: false, token: METRICS_TOKEN } }));
    await callWeather(app);
  });
  afterAll(async () => app.close());

  it('serves metrics on the API port only to a caller presenting the metrics token', async () => {
    for (const headers of [{}, bearer('wrong-token-wrong-token-wrong'), bearer(await signToken({ roles: ['admin'] }))]) {
      const res = await app.inject({ url: '/metrics', headers });
      expect(res.statusCode).toBe(401);
      expect(res.json().code).toBe('TG_UNAUTHENTICATED');
      expect(res.body).not.toContain('get_weather');
    }
    const res = await app.inject({ url: '/metrics', headers: bearer(METRICS_TOKEN) });
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('toolgate_tool_calls_total{tool="get_weather"');
    expect(app.metricsServer).toBeUndefined();
  });
});
