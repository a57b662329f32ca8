// A stdio upstream killed and respawned: the reconnect is a health signal, so the service's circuit
// breaker goes half-open at once instead of answering CIRCUIT_OPEN for the rest of its cool-down.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { API_KEY, bearer, buildTestApp, scrapeMetrics, testConfig } from '../../helpers/build.js';
import { everythingBin } from '../../fixtures/mcp/spawn-everything.js';

let app: FastifyInstance;
const headers = bearer(API_KEY);

beforeAll(async () => {
  app = await buildTestApp(
    testConfig({
      mcp: { local: [{ service: 'everything', transport: 'stdio', command: everythingBin, args: ['stdio'], env: {} }] },
      // One failure opens the breaker; the cool-down (30 s) is far longer than the test.
      tenants: { acme: { policies: { 'circuit-breaker': { failureThreshold: 1, cooldownMs: 30_000 }, retry: false } } },
    }),
  );
});
afterAll(async () => {
  await app?.close();
});

interface Upstream {
  service: string;
  state: string;
  detail?: { pid?: number };
}
const upstream = async (): Promise<Upstream> =>
  ((await app.inject({ url: '/v1/admin/upstreams', headers })).json() as { upstreams: Upstream[] }).upstreams.find((entry) => entry.service === 'everything')!;
const echo = async (message: string) =>
  (await app.inject({ method: 'POST', url: '/v1/execute', headers, payload: { name: 'everything_echo', arguments: { message } } })).json() as {
    ok: boolean;
    output: string;
    error?: { errorType: string };
  };
const circuitState = async () => /toolgate_circuit_state\{service="everything"\} (\d)/.exec(await scrapeMetrics(app))?.[1];

describe('circuit breaker and a reconnecting stdio upstream', () => {
  it('opens on the outage, and the successful reconnect lets the next call through (half-open probe) instead of CIRCUIT_OPEN', { timeout: 30_000 }, async () => {
    expect(await echo('before')).toMatchObject({ ok: true, output: 'Echo: before' });
    const { pid } = (await upstream()).detail ?? {};
    expect(typeof pid).toBe('number');

    process.kill(pid!, 'SIGKILL');
    await vi.waitFor(async () => expect((await upstream()).state).not.toBe('ready'), { interval: 10 });
    expect((await echo('during')).error?.errorType).toBe('UPSTREAM_ERROR');
    const opened = await circuitState();

    await vi.waitFor(async () => expect((await upstream()).state).toBe('ready'), { timeout: 15_000 });
    expect((await upstream()).detail?.pid).not.toBe(pid);
    expect(await echo('after')).toMatchObject({ ok: true, output: 'Echo: after' });
    // Open during the outage (the gauge's values: closed 0, open 1, half-open 2), closed again after the probe.
    expect(opened).toBe('1');
    expect(await circuitState()).toBe('0');
  });
});
