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

const ROUTES = [
  { url: '/v1/execute', payload: { name: 'get_weather', arguments: { city: 'x' } } },
  { url: '/v1/execute/batch', payload: { calls: [{ name: 'get_weather', arguments: { city: 'x' } }] } },
];

describe('a tenant dropped from the compiled cache', () => {
  it.each(ROUTES)('is admitted on $url when it was dropped while the body uploads', async ({ url, payload }) => {
    const body = new PassThrough();
    const pending = app.inject({ method: 'POST', url, headers: { ...bearer(globex), 'content-type': 'application/json' }, payload: body });
    const text = JSON.stringify(payload);
    body.write(text.slice(0, 5));
    await new Promise((resolve) => setTimeout(resolve, 50)); // authenticated by now; the body is still coming
    await evictGlobex();
    body.end(text.slice(5));
    const res = await pending;
    expect(res.statusCode).toBe(200);
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
