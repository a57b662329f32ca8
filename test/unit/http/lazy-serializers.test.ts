import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { buildServer } from '../../../src/app.js';
import { demoConfig } from '../../../src/config/demo.js';
import { lazySerializers } from '../../../src/http/lazy-serializers.js';

describe('lazy response serializers', () => {
  it('build nothing for a route until its first response', () => {
    const compile = lazySerializers()({}, {});
    // A schema fast-json-stringify refuses: built now, this would throw.
    const serialize = compile({ method: 'GET', url: '/x', httpStatus: '200', schema: { $ref: '#/definitions/missing' } });
    expect(() => serialize({ a: 1 })).toThrow();
  });

  it('serialize as Fastify does: only the properties the schema names, one build per route and status', async () => {
    const app = Fastify({ schemaController: { compilersFactory: { buildSerializer: lazySerializers() } } });
    app.get('/x', { schema: { response: { 200: { type: 'object', properties: { a: { type: 'number' } } } } } }, async () => ({ a: 1, secret: 'no' }));
    const first = await app.inject({ method: 'GET', url: '/x' });
    const second = await app.inject({ method: 'GET', url: '/x' });
    expect([first.body, second.body]).toEqual(['{"a":1}', '{"a":1}']);
    await app.close();
  });

  it("compile for every route and status of the gateway: built at start, as Fastify would, the demo app's schemas all compile", async () => {
    // The demo app registers every route (scripts/openapi.ts builds the OpenAPI document from it). Lazy, a schema
    // that did not compile would fail only its first response; built eagerly here it fails this start instead.
    const env = { TOOLGATE_DEV_API_KEY: 'tg_serializers_test', LOG_LEVEL: 'silent' };
    const app = await buildServer(demoConfig(env).config, { logger: false, defaultMetrics: false, env, eagerSerializers: true });
    await expect(app.ready()).resolves.toBeDefined();
    await app.close();
  });
});
