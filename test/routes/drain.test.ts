// The drain steps of a shutdown, driven directly (src/http/shutdown.ts runs them on SIGTERM; the real
// process is tested in test/integration/shutdown.test.ts).
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_KEY, bearer, buildTestApp, testConfig } from '../helpers/build.js';

let app: FastifyInstance;
const headers = bearer(API_KEY);

beforeAll(async () => {
  app = await buildTestApp(
    testConfig({
      functions: [{ module: './test/fixtures/functions/basic.mjs' }, { module: './test/fixtures/functions/stubborn.mjs' }],
      tenants: { acme: { policies: { retry: { attempts: 3, on: ['TIMEOUT'] } } } },
    }),
  );
});
afterAll(async () => {
  await app.close();
});

const execute = (name: string, args: Record<string, unknown>) => app.inject({ method: 'POST', url: '/v1/execute', headers, payload: { name, arguments: args } });

describe('draining for shutdown', () => {
  it('turns readiness 503 first, then refuses new requests with 503 + Retry-After, then cancels and answers the running calls', async () => {
    // Running before the drain: one honours its AbortSignal (and is read-only, so retry would repeat it), one ignores it.
    const honours = execute('slow', { ms: 30_000 });
    const ignores = execute('stubborn', { ms: 30_000 });
    await new Promise((resolve) => setTimeout(resolve, 50));

    app.drain.begin();
    const ready = await app.inject({ url: '/readyz' });
    expect(ready.statusCode).toBe(503);
    expect(ready.json()).toMatchObject({ status: 'draining' });
    expect((await execute('get_weather', { city: 'x' })).json()).toMatchObject({ ok: true });

    app.drain.close();
    const refused = await execute('get_weather', { city: 'x' });
    expect(refused.statusCode).toBe(503);
    expect(refused.headers['retry-after']).toBe('1');
    expect(refused.json()).toMatchObject({ code: 'TG_NOT_READY' });
    expect((await app.inject({ url: '/healthz' })).statusCode).toBe(200);

    app.drain.cancel();
    const shuttingDown = { ok: false, error: { errorType: 'TIMEOUT', error: 'gateway shutting down' } };
    expect((await honours).json()).toMatchObject(shuttingDown);
    expect((await ignores).json()).toMatchObject(shuttingDown);
  });
});
